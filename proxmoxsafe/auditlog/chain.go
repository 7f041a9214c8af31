package auditlog

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
)

// chainKey computes the links of the chain: HMAC-SHA256 with the key, or
// plain SHA-256 without one. The key never leaves this type: the anchor
// names it by an id derived with its own label.
type chainKey struct{ key []byte }

func newChainKey(k []byte) (chainKey, error) {
	if len(k) == 0 {
		return chainKey{}, nil
	}
	if len(k) < MinKeyBytes {
		return chainKey{}, fmt.Errorf("audit log: the key is %d bytes, want at least %d", len(k), MinKeyBytes)
	}
	return chainKey{key: append([]byte(nil), k...)}, nil
}

func (c chainKey) keyed() bool { return c.key != nil }

// sum is HMAC-SHA256 (keyed) or SHA-256 of the label and data.
func (c chainKey) sum(label string, data []byte) string {
	if c.key == nil {
		h := sha256.New()
		h.Write([]byte(label))
		h.Write(data)
		return hex.EncodeToString(h.Sum(nil))
	}
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(label))
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// link is the chain link of a raw line without its newline: what the next
// record carries as Prev. Without a key it is the plain SHA-256 of the
// line, as in the earlier format, so either can be recomputed from the
// file bytes alone (plus the key).
func (c chainKey) link(line []byte) string { return c.sum("", line) }

// id names the key in the anchor record without revealing it, so that a
// verifier given the wrong key can say so instead of reporting tampering.
func (c chainKey) id() string {
	if c.key == nil {
		return ""
	}
	return c.sum("proxmox-safe-mcp audit key id\x00", nil)[:16]
}

// sealMAC authenticates a seal. Its own label keeps it distinct from every
// link: a link copied from the log can never pass as a seal.
func (c chainKey) sealMAC(s sealState) string {
	data := strconv.FormatInt(s.Seq, 10) + "\x00" + strconv.FormatInt(s.Size, 10) + "\x00" + s.Link
	return c.sum("proxmox-safe-mcp audit seal\x00", []byte(data))
}
