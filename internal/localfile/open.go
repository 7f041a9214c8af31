package localfile

import (
	"fmt"
	"os"
	"syscall"
)

// NotRegularError is OpenRegular's refusal of a path that is not a
// regular file (a directory, a FIFO, a device). Callers with their own
// wording match it with errors.As.
type NotRegularError struct {
	Path string
	Mode os.FileMode // the file's type bits
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s); it must be a plain file", e.Path, e.Mode)
}

// OpenRegular opens path without blocking (O_NONBLOCK: opening a FIFO for
// writing would otherwise wait for a reader forever), mode 0600 when it
// creates the file, and refuses anything but a regular file with a
// *NotRegularError, checked on the opened descriptor so the answer cannot
// change between check and use. It returns the descriptor's FileInfo, so
// a caller that checks owner or mode needs no second stat.
func OpenRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: path, Mode: st.Mode().Type()}
	}
	return f, st, nil
}
