package keyfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// OpenRegular opens path for reading without blocking on a FIFO and
// refuses anything but a regular file (localfile.OpenRegular), in the
// words the binary's settings use for a key or secret file. An error from
// opening the file is returned as is.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, st, err := localfile.OpenRegular(path, os.O_RDONLY)
	if nr := (*localfile.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, st, err
}

// maxShownPath bounds a path echoed in an error; a real path is shorter,
// a value pasted by mistake is not.
const maxShownPath = 256

// PathError drops the "open " prefix noise of an *os.PathError but keeps
// path (clipped) and cause.
func PathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", sanitize.Clip(pe.Path, maxShownPath), pe.Err)
	}
	return err
}

// InDir reports whether path is inside dir (both cleaned; dir "" never).
func InDir(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != "." && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ErrNotHex is ReadHex's answer for content that is not hex; the caller
// says what the file must hold (never the content).
var ErrNotHex = errors.New("not hex")

// ReadHex opens path with OpenRegular, applies check to it, and returns
// its hex content decoded (one trailing newline allowed). An error from
// opening the file is returned as is.
func ReadHex(path string, check func(os.FileInfo) error) ([]byte, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if check != nil {
		if err := check(st); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, err
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	key, err := hex.DecodeString(s)
	if err != nil {
		return nil, ErrNotHex
	}
	return key, nil
}

// Create creates path (parent directories 0700, the file 0600) holding n
// random bytes as hex. When another process created it a moment ago, it
// reads that one with read once written (created false).
func Create(path string, n int, read func(string) ([]byte, error)) (key []byte, created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("cannot create its directory: %v", PathError(err))
	}
	raw := make([]byte, n)
	if _, err := rand.Read(raw); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		for range 50 {
			if key, err := read(path); err == nil {
				return key, false, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		key, err := read(path)
		return key, false, err
	}
	if err != nil {
		return nil, false, PathError(err)
	}
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return nil, false, err
	}
	return raw, true, nil
}
