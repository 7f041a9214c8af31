package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGuestAgentInfoTool: over MCP against the demo cluster, what web-01's
// agent reports, and db-01 (no agent) reported inline.
func TestGuestAgentInfoTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			res := f.call(t, ctx, ToolGuestAgentInfo, map[string]any{"node": "pve1", "vmid": 100})
			var out proxmoxsafe.GuestAgentInfoResult
			structured(t, res, &out)
			if out.OS == nil || out.OS.VersionID != "13" || out.HostName != "web-01" || out.FileSystemsTotal != 2 || out.ClockOffsetSeconds == nil {
				t.Errorf("web-01: %+v", out)
			}
			summary := strings.SplitN(text(t, res), "\n", 2)[0]
			if !strings.HasPrefix(summary, "VM 100 on pve1: Debian GNU/Linux 13 (trixie), host web-01, 2 file systems (fullest / 82%), clock +1.") {
				t.Errorf("summary = %q", summary)
			}
			res = f.call(t, ctx, ToolGuestAgentInfo, map[string]any{"node": "pve1", "vmid": 102})
			if s := text(t, res); res.IsError || !strings.HasPrefix(s, "VM 102 on pve1: guest agent unavailable: agent_not_configured (No QEMU guest agent configured)") {
				t.Errorf("db-01: %q", s)
			}
			res = f.call(t, ctx, ToolGuestAgentInfo, map[string]any{"node": "pve3", "vmid": 106})
			if !res.IsError || !strings.Contains(text(t, res), "allowlist") {
				t.Errorf("pve3: %q, want the allowlist refusal", text(t, res))
			}
		})
	}
}
