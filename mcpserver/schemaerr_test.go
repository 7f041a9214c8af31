package mcpserver

import (
	"strings"
	"testing"
)

// TestSchemaErrorsReadLikeTheLibrary: go-sdk's raw schema messages
// ("maximum: 500/1 is greater than 120.000000") become the library's
// "field: problem", and the refused value is not repeated.
func TestSchemaErrorsReadLikeTheLibrary(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newFixture(t, ctx, "", fixtureConfig{})
	power := func(kv ...any) map[string]any {
		m := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	long := strings.Repeat("z", 300)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolGuestPower, power("wait", true, "timeout_seconds", 500), "timeout_seconds: must be at most 120"},
		{ToolGuestPower, power("vmid", 5), "vmid: must be a VMID from 100 to 999999999"},
		{ToolGuestPower, power("type", "qemx"), "type: must be one of: qemu, lxc"},
		{ToolGuestPower, power("vmid", "100"), "vmid: must be a whole number"},
		{ToolGuestPower, power("extra", 1), "extra: is not a parameter of guest_power"},
		{ToolGuestPower, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}, "action: is required"},
		{ToolGuestPower, power("node", "p_e"), "node: must be a Proxmox node name"},
		{ToolListGuests, map[string]any{"name": long}, "name: must be at most 128 characters long"},
		{ToolListGuests, map[string]any{"limit": 5000}, "limit: must be at most 1000"},
		{ToolSnapshotGuest, map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "current"}, "snapname: is a name Proxmox reserves"},
	} {
		msg := text(t, f.call(t, ctx, tc.tool, tc.args))
		words, _ := lastLineJSON(t, msg)
		if !strings.Contains(words, tc.want) || !strings.HasSuffix(words, "; no action was taken") {
			t.Errorf("%v: %q, want %q", tc.args, words, tc.want)
		}
		for _, raw := range []string{"validating", "/properties/", "000000", long, "p_e", "qemx"} {
			if strings.Contains(msg, raw) {
				t.Errorf("%v: message still has %q: %q", tc.args, raw, msg)
			}
		}
	}
}
