package proxmoxsafe_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestReceiptRoundTripsThroughJSON: a receipt is what a caller keeps
// (the MCP tools return it as JSON); decoded again, it names the task
// and the target it came with, and Verify proves it from the JSON alone.
func TestReceiptRoundTripsThroughJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"upid":"UPID:pve1:`, `"task":{"node":"pve1"`, `"action":"shutdown"`, `"target":{"node":"pve1","type":"qemu","vmid":100}`, `"before":{"status":"running"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("receipt JSON lacks %s:\n%s", k, b)
		}
	}
	var back proxmoxsafe.Receipt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	before := r.Before
	before.Uptime = 0 // not part of the JSON: only the precondition reads it
	if back.UPID != r.UPID || !back.Task.StartTime.Equal(r.Task.StartTime) || back.Task.ID != r.Task.ID || back.Target != r.Target || back.Before != before {
		t.Errorf("decoded receipt %+v, want %+v", back, r)
	}
	o, err := e.client.Verify(t.Context(), &back, fastVerify())
	if err != nil || o.Status != proxmoxsafe.OutcomeCompleted || o.Observed != "stopped" {
		t.Errorf("Verify of the decoded receipt = %+v, %v", o, err)
	}
}
