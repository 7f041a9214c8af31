//go:build unix

package keyfile

import (
	"fmt"
	"os"
	"syscall"
)

// OwnedByMe refuses a key file owned by another user: they could replace
// the key, or read it.
func OwnedByMe(path string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by the user running the server (uid %d)", path, st.Uid, os.Geteuid())
	}
	return nil
}

// ModeBitsAreAccess: on Unix a file's mode bits say who may read it.
const ModeBitsAreAccess = true
