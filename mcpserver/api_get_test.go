package mcpserver

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestAPIGetTool: the exact request the fake saw, the answer in
// structuredContent; a hostile path and a denied path are tool errors
// with zero upstream requests.
func TestAPIGetTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), pv, fixtureConfig{policy: gatewayPolicy()})
			res := f.call(t, t.Context(), ToolAPIGet, map[string]any{"path": "/nodes/pve1/qemu", "params": map[string]any{"full": "1"}})
			if res.IsError {
				t.Fatalf("api_get: %s", text(t, res))
			}
			var out proxmoxsafe.APIResult
			structured(t, res, &out)
			if list, ok := out.Data.([]any); !ok || len(list) == 0 || out.Path != "/nodes/pve1/qemu" {
				t.Errorf("result = %+v", out)
			}
			reqs := f.fake.Requests()
			if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/nodes/pve1/qemu" || reqs[0].Query.Encode() != "full=1" {
				t.Errorf("requests = %+v, want exactly GET /nodes/pve1/qemu?full=1", reqs)
			}
			for _, args := range []map[string]any{
				{"path": "/nodes/pve1/../../access/acl"},
				{"path": "https://evil.example/api2/json/version"},
				{"path": "/nodes/pve1/qemu/100/cloudinit/dump"},
				{"path": "/nodes/pve9/status"},
				{"path": "/version", "params": map[string]any{"a": 1}}, // not a string: the schema refuses it
			} {
				f.fake.ResetRequests()
				res := f.call(t, t.Context(), ToolAPIGet, args)
				if !res.IsError || !strings.Contains(text(t, res), "no action was taken") {
					t.Errorf("%v: %s, want a refusal that says no action was taken", args, text(t, res))
				}
				if got := f.fake.Requests(); len(got) != 0 {
					t.Errorf("%v: upstream requests %+v, want none", args, got)
				}
			}
		})
	}
}
