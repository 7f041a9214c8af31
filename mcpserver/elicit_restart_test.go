package mcpserver

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/seal"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestElicitAcrossRestart: with a persistent key and a persistent nonce
// record (a grant directory), an elicitation asked before a restart is
// answered after it, once: the answer replayed to a third server is
// refused, with nothing more sent. A server with another key cannot open
// the state. A key without a persistent record is refused.
func TestElicitAcrossRestart(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, seal.KeySize)
	dir := t.TempDir()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	server := func(key []byte) *elicitFixture {
		t.Helper()
		opts := &ElicitOptions{Key: key}
		if key != nil {
			store, err := grant.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts.Used = store
		}
		ap, err := NewElicitApprover(opts)
		if err != nil {
			t.Fatal(err)
		}
		return elicitFixtureWith(t, fake, ap)
	}
	retry := func(f *elicitFixture, state string) *mcp.CallToolResult {
		t.Helper()
		cs := f.connectWith(t, "", &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101,
			InputResponses: mcp.InputResponseMap{elicitInputID: accept("101")}, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	state := server(key).firstState(t)

	if res := retry(server(nil), state); !res.IsError || !strings.Contains(text(t, res), "does not unseal") {
		t.Fatalf("another key: %s", mustJSON(t, res))
	}
	if res := retry(server(key), state); res.IsError || len(fake.MutatingRequests()) != 1 {
		t.Fatalf("after a restart: %d mutating: %s", len(fake.MutatingRequests()), mustJSON(t, res))
	}
	// The HA manager is now stopping the guest (HA state request_stop),
	// which the power precondition refuses; as if it were asked to start
	// it again, so only the replay check can refuse.
	fake.Update(func(c *proxmoxtest.Cluster) {
		for _, g := range c.Guests {
			if g.VMID == 101 {
				g.HAState = "started"
			}
		}
	})
	if res := retry(server(key), state); !res.IsError || !strings.Contains(text(t, res), "already answered") || len(fake.MutatingRequests()) != 1 {
		t.Fatalf("replayed after another restart: %d mutating: %s", len(fake.MutatingRequests()), mustJSON(t, res))
	}
	if _, err := NewElicitApprover(&ElicitOptions{Key: key}); err == nil || !strings.Contains(err.Error(), "Used") {
		t.Errorf("a key without a nonce record: %v", err)
	}
}

// failingNonces is a NonceRecorder whose storage fails.
type failingNonces struct{}

func (failingNonces) UseNonce(string, time.Time) (bool, error) {
	return false, errors.New("disk full")
}

// TestElicitNonceRecordFails: when the answer cannot be recorded as used,
// the approval fails closed: refused, audited, nothing sent.
func TestElicitNonceRecordFails(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(&ElicitOptions{Key: bytes.Repeat([]byte{9}, seal.KeySize), Used: failingNonces{}})
	if err != nil {
		t.Fatal(err)
	}
	f := elicitFixtureWith(t, fake, ap)
	state := f.firstState(t)
	cs := f.connectWith(t, "", &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101,
		InputResponses: mcp.InputResponseMap{elicitInputID: accept("101")}, RequestState: state})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(t, res), "could not be recorded") || len(fake.MutatingRequests()) != 0 {
		t.Fatalf("%d mutating: %s", len(fake.MutatingRequests()), mustJSON(t, res))
	}
	if rec := f.lastAudit(t); rec.Event != proxmoxsafe.AuditRefused || !strings.Contains(rec.Reason, "disk full") {
		t.Errorf("audit %+v, want the refusal", rec)
	}
}
