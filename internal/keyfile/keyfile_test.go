package keyfile

import (
	"bytes"
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
	if _, _, err := OpenRegular(dir); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("directory: err = %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, _, err := OpenRegular(fifo); err == nil { // returns at once: O_NONBLOCK
		t.Error("a FIFO was opened")
	}
	if _, _, err := OpenRegular(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: err = %v, want it as is", err)
	}
}

func TestReadHexAndCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "key")
	read := func(p string) ([]byte, error) { return ReadHex(p, nil) }
	key, created, err := Create(path, 32, read)
	if err != nil || !created || len(key) != 32 {
		t.Fatalf("Create: %d bytes, created %t, %v", len(key), created, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
	again, created, err := Create(path, 32, read)
	if err != nil || created || !bytes.Equal(again, key) {
		t.Errorf("second Create: created %t, same %t, %v", created, bytes.Equal(again, key), err)
	}
	if err := os.WriteFile(path, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := read(path); !errors.Is(err, ErrNotHex) {
		t.Errorf("not hex: err = %v", err)
	}
	refuse := errors.New("refused")
	if _, err := ReadHex(path, func(os.FileInfo) error { return refuse }); !errors.Is(err, refuse) {
		t.Errorf("check: err = %v", err)
	}
}

func TestInDirAndPathError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/run/creds/key", "/run/creds", true},
		{"/run/creds", "/run/creds", false},
		{"/run/credsX/key", "/run/creds", false},
		{"/run/creds/../x", "/run/creds", false},
		{"/run/creds/key", "", false},
	} {
		if got := InDir(tc.path, tc.dir); got != tc.want {
			t.Errorf("InDir(%q, %q) = %t", tc.path, tc.dir, got)
		}
	}
	_, err := os.Open("/nonexistent/x")
	if got := PathError(err).Error(); got != "/nonexistent/x: no such file or directory" {
		t.Errorf("PathError = %q", got)
	}
}
