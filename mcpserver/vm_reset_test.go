package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// An argument the input schema refuses (a container for vm_reset) sends
// nothing and is audited once, like every refused mutation.
func TestVMResetContainerRefusedBySchema(t *testing.T) {
	t.Parallel()
	f := responderFixture(t, "")
	f.fake.ResetRequests()
	res := f.call(t, t.Context(), ToolVMReset, map[string]any{"node": "pve1", "type": "lxc", "vmid": 200})
	if !res.IsError || !strings.Contains(text(t, res), "type") {
		t.Fatalf("result %v %q", res.IsError, text(t, res))
	}
	if r := f.fake.Requests(); len(r) != 0 {
		t.Errorf("requests: %v", r)
	}
	recs := f.audit.records(t)
	if len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused || recs[0].Op != proxmoxsafe.OpResetGuest {
		t.Errorf("audit = %+v", recs)
	}
}
