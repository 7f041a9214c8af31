package auditlog

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/localfile"
)

// sealFormat names the seal file's format.
const sealFormat = "proxmox-safe-mcp-audit-seal/1"

// sealBytes is the fixed size of a seal file: every update overwrites the
// whole file in one write at offset 0, so it never needs truncating and a
// reader never sees the end of an older, longer seal.
const sealBytes = 512

// sealState is what a seal records: the last record's Seq, the log's size
// in bytes through that record's newline, and that record's link.
type sealState struct {
	Seq  int64  `json:"seq"`
	Size int64  `json:"size"`
	Link string `json:"link"`
}

type sealJSON struct {
	Format string `json:"format"`
	sealState
	MAC string `json:"mac"`
}

// sealFile is the open seal of a log.
type sealFile struct{ f *os.File }

// errSealMismatch marks a seal that does not match its log.
var errSealMismatch = errors.New("the seal does not match the log")

func openSeal(path string) (*sealFile, error) {
	f, _, err := localfile.OpenRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	return &sealFile{f: f}, nil
}

// write replaces the seal with s and syncs it.
func (s *sealFile) write(c chainKey, st sealState) error {
	b, err := json.Marshal(sealJSON{Format: sealFormat, sealState: st, MAC: c.sealMAC(st)})
	if err != nil {
		return err
	}
	if len(b) >= sealBytes {
		return fmt.Errorf("seal of %d bytes does not fit", len(b))
	}
	buf := bytes.Repeat([]byte(" "), sealBytes)
	copy(buf, b)
	buf[sealBytes-1] = '\n'
	if _, err := s.f.WriteAt(buf, 0); err != nil {
		return err
	}
	return s.f.Sync()
}

// read returns the seal, or nil if the file is empty (a log that was never
// sealed). A seal that does not parse, or whose MAC does not verify with c,
// is an error: it was edited, or written with another key.
func (s *sealFile) read(c chainKey) (*sealState, error) {
	return readSeal(s.f, c)
}

func readSeal(r io.ReaderAt, c chainKey) (*sealState, error) {
	buf := make([]byte, 4*sealBytes)
	n, err := r.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading the seal: %w", err)
	}
	b := bytes.TrimSpace(buf[:n])
	if len(b) == 0 {
		return nil, nil
	}
	var sj sealJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sj); err != nil || sj.Format != sealFormat {
		return nil, fmt.Errorf("the seal file is not a valid seal: %w", errSealMismatch)
	}
	if !hmac.Equal([]byte(sj.MAC), []byte(c.sealMAC(sj.sealState))) {
		return nil, fmt.Errorf("the seal's MAC does not verify: the seal was edited, or written with another key: %w", errSealMismatch)
	}
	return &sj.sealState, nil
}
