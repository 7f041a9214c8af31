package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The audit key and the elicitation key are both hex files the server
// reads, and creates when missing, the same way; the rules that differ
// (owner, mode, size) stay with each key.

// errKeyNotHex is readHexKeyFile's answer for content that is not hex; the
// caller says what the file must hold (never the content).
var errKeyNotHex = errors.New("not hex")

// readHexKeyFile opens path without blocking on a FIFO, refuses anything
// but a regular file, applies check to it, and returns its hex content
// decoded (one trailing newline allowed). An error from opening the file
// is returned as is.
func readHexKeyFile(path string, check func(os.FileInfo) error) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
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
		return nil, errKeyNotHex
	}
	return key, nil
}

// createKeyFile creates path (parent directories 0700, the file 0600)
// holding n random bytes as hex. When another process created it a moment
// ago, it reads that one with read once written (created false).
func createKeyFile(path string, n int, read func(string) ([]byte, error)) (key []byte, created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("cannot create its directory: %v", pathErr(err))
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
		return nil, false, pathErr(err)
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
