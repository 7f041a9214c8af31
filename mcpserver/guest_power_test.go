package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// plan: true through a tool: the plan in text and structured content,
// nothing mutating sent.
func TestToolPlan(t *testing.T) {
	t.Parallel()
	f := adminFixture(t, "")
	res := f.call(t, t.Context(), ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop", "plan": true})
	txt := text(t, res)
	if res.IsError || !strings.Contains(txt, "Plan only") || !strings.Contains(txt, "POST /nodes/pve1/qemu/100/status/stop") || !strings.Contains(txt, `"APPROVE stop pve1/qemu/100"`) {
		t.Fatalf("plan: %v %q", res.IsError, txt)
	}
	var r proxmoxsafe.Receipt
	structured(t, res, &r)
	if r.Plan == nil || r.UPID != "" {
		t.Errorf("receipt = %+v", r)
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}
