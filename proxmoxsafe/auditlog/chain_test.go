package auditlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestChainKeyUnkeyed: without a key a link is the plain SHA-256 of the
// line, as the earlier format had it, and the key id is empty.
func TestChainKeyUnkeyed(t *testing.T) {
	t.Parallel()
	c, err := newChainKey(nil)
	if err != nil || c.keyed() || c.id() != "" {
		t.Fatalf("newChainKey(nil) = %+v, %v; want unkeyed with no id", c, err)
	}
	line := []byte(`{"seq":1}`)
	h := sha256.Sum256(line)
	if got := c.link(line); got != hex.EncodeToString(h[:]) {
		t.Errorf("link = %s, want the SHA-256 of the line", got)
	}
}

// TestChainKeyKeyed: a key is copied, shorter ones are refused, and its id,
// a link and a seal's MAC are three different values.
func TestChainKeyKeyed(t *testing.T) {
	t.Parallel()
	if _, err := newChainKey(make([]byte, MinKeyBytes-1)); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("a %d-byte key: %v, want a refusal", MinKeyBytes-1, err)
	}
	key := bytes.Repeat([]byte{7}, MinKeyBytes)
	c, err := newChainKey(key)
	if err != nil || !c.keyed() {
		t.Fatalf("newChainKey = %+v, %v", c, err)
	}
	id, link := c.id(), c.link(nil)
	key[0] = 8 // the caller's slice is not the key
	if c.id() != id || len(id) != 16 {
		t.Errorf("id = %q, then %q; want 16 stable hex digits", id, c.id())
	}
	mac := c.sealMAC(sealState{})
	if link == mac || strings.HasPrefix(link, id) || strings.HasPrefix(mac, id) {
		t.Errorf("id %s, link %s and seal MAC %s must differ", id, link, mac)
	}
	plain, _ := newChainKey(nil)
	if plain.link(nil) == link {
		t.Error("a keyed link equals the unkeyed one")
	}
}
