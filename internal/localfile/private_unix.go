//go:build unix

package localfile

import (
	"fmt"
	"os"
	"syscall"
)

// CheckPrivate refuses a state directory or file that another local user
// could change: one not owned by this process's user, or writable by
// group or others. Whoever can write a grant directory can approve.
func CheckPrivate(path string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this user (uid %d); nothing was changed", path, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (mode %04o); chmod 700 it; nothing was changed", path, fi.Mode().Perm())
	}
	return nil
}
