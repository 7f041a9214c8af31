package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestListGuestsLargeCluster(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{cluster: proxmoxtest.GenerateCluster(10, 1000, 1)})
			seen := map[int]bool{}
			cursor := ""
			for page := range 3 {
				args := map[string]any{}
				if cursor != "" {
					args["cursor"] = cursor
				}
				res := f.call(t, ctx, ToolListGuests, args)
				// The structured result and its copy in the text content
				// (content.go) are each bounded.
				if size := len(mustJSON(t, res.StructuredContent)); size > 64<<10 {
					t.Errorf("page %d: structured result is %d bytes of JSON, want at most 64 KiB", page, size)
				}
				if size := len(text(t, res)); size > 64<<10 {
					t.Errorf("page %d: text content is %d bytes, want at most 64 KiB", page, size)
				}
				var out proxmoxsafe.ListGuestsResult
				structured(t, res, &out)
				if out.Total != 10000 || len(out.Guests) != proxmoxsafe.DefaultListLimit || out.NextCursor == "" {
					t.Fatalf("page %d: total %d, %d guests, cursor %q", page, out.Total, len(out.Guests), out.NextCursor)
				}
				if !strings.Contains(text(t, res), fmt.Sprintf("Listed 200 of 10000 guests; more with cursor %q", out.NextCursor)) {
					t.Errorf("text = %q", text(t, res))
				}
				for i, g := range out.Guests {
					if seen[g.VMID] {
						t.Fatalf("page %d repeats vmid %d", page, g.VMID)
					}
					seen[g.VMID] = true
					if want := 100 + page*200 + i; g.VMID != want {
						t.Fatalf("page %d item %d: vmid %d, want %d", page, i, g.VMID, want)
					}
				}
				cursor = out.NextCursor
			}
			// The last page of a large limit ends without a cursor.
			res := f.call(t, ctx, ToolListGuests, map[string]any{"node": "pve10", "limit": 1000})
			var out proxmoxsafe.ListGuestsResult
			structured(t, res, &out)
			if out.Total != 1000 || len(out.Guests) != 1000 || out.NextCursor != "" {
				t.Errorf("pve10: total %d, %d guests, cursor %q", out.Total, len(out.Guests), out.NextCursor)
			}
		})
	}
}
