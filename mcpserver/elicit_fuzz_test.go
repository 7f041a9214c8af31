package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/seal"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// FuzzElicitState: no request state approves unless the server sealed it
// (under its key, for this call), none approves twice, and none panics. The seeds run in plain
// `go test`; `go test -run XXX -fuzz FuzzElicitState ./mcpserver` explores.
func FuzzElicitState(f *testing.F) {
	store, err := grant.Open(f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	ap, err := NewElicitApprover(&ElicitOptions{Key: bytes.Repeat([]byte{3}, seal.KeySize), Used: store})
	if err != nil {
		f.Fatal(err)
	}
	args := json.RawMessage(`{"node":"pve1","type":"qemu","vmid":101,"action":"shutdown"}`)
	ar := proxmoxsafe.ApprovalRequest{
		Action:    "shutdown",
		Target:    proxmoxsafe.Target{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101},
		Arguments: "digest-of-the-arguments",
		State:     proxmoxsafe.GuestState{Status: "running", Name: "web1"},
		Effect:    "shut down VM 101",
	}
	first := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolGuestPower, Arguments: args}}
	var ir *InputRequiredError
	if err := ap.ask(first, ar, "fuzz"); !errors.As(err, &ir) {
		f.Fatalf("ask: %v", err)
	}
	valid := ir.State
	for _, s := range []string{valid, valid[:len(valid)-1], valid + "A", "", "e30", "-", string(make([]byte, 100))} {
		f.Add(s)
	}
	approved := map[string]bool{}
	f.Fuzz(func(t *testing.T, state string) {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
			Name: ToolGuestPower, Arguments: args, RequestState: state,
			InputResponses: mcp.InputResponseMap{elicitInputID: accept("101")},
		}}
		err := ap.Approve(withRequest(t.Context(), req), ar)
		if err == nil {
			if _, oerr := ap.sealer.Open(elicitPurpose, state); oerr != nil || approved[state] {
				t.Fatalf("state %q approved (opens: %v, approved before: %v); only a sealed state may, once", state, oerr, approved[state])
			}
			approved[state] = true
		}
		if err != nil && !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
			t.Fatalf("state %q: error %v does not mean approval required", state, err)
		}
	})
}
