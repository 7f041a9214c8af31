package localfile

import (
	"fmt"
	"os"
	"syscall"
)

// OpenRegular opens path without blocking (O_NONBLOCK: opening a FIFO for
// writing would otherwise wait for a reader forever), mode 0600 when it
// creates the file, and refuses anything but a regular file, checked on
// the opened descriptor so the answer cannot change between check and use.
func OpenRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s); it must be a plain file", path, st.Mode().Type())
	}
	return f, nil
}
