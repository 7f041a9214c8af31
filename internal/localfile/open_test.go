//go:build unix

package localfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRegularRefusesAllButAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO opened for writing without a reader would block forever
	// without O_NONBLOCK; here it fails (ENXIO) or is refused, never hangs.
	if f, _, err := OpenRegular(fifo, os.O_RDWR); err == nil {
		f.Close()
		t.Fatal("a FIFO was opened as a regular file")
	} else if !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO: %v, want 'not a regular file'", err)
	}
	if f, _, err := OpenRegular(dir, os.O_RDONLY); err == nil {
		f.Close()
		t.Fatal("a directory was opened as a regular file")
	} else if nr := (*NotRegularError)(nil); !errors.As(err, &nr) || nr.Path != dir || !nr.Mode.IsDir() {
		t.Errorf("directory: %v, want a *NotRegularError naming it", err)
	}
	path := filepath.Join(dir, "state")
	f, st, err := OpenRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %04o, want 0600", st.Mode().Perm())
	}
}
