package mcpserver

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFleetListGuests: list_guests over every cluster ("*") or a list, one
// cluster down: the others are listed, the down one reported inline;
// pages of 5 walk every guest of every reachable cluster exactly once, in
// cluster order then VMID; a bad cluster list is refused with nothing
// sent.
func TestFleetListGuests(t *testing.T) {
	t.Parallel()
	lab := newFleetMember(t, "lab", defaultPolicy())
	down := newFleetMember(t, "down", defaultPolicy())
	prod := newFleetMember(t, "prod", defaultPolicy())
	down.fake.Close()
	cs := connect(t, t.Context(), NewFleet(fleetClients(lab, down, prod), nil), "")
	list := func(args map[string]any) (*mcp.CallToolResult, FleetGuestsResult) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolListGuests, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		var out FleetGuestsResult
		if !res.IsError {
			if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil {
				t.Fatal(err)
			}
		}
		return res, out
	}
	one, labOnly := list(map[string]any{"cluster": []string{"lab"}})
	if one.IsError || len(labOnly.Clusters) != 1 || labOnly.Total == 0 || labOnly.Guests[0].Cluster != "lab" {
		t.Fatalf("lab alone: %s", text(t, one))
	}
	perCluster := labOnly.Total

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"cluster": "*", "limit": 5}
		if cursor != "" {
			args["cursor"] = cursor
		}
		res, out := list(args)
		if res.IsError {
			t.Fatalf("page %d: %s", page, text(t, res))
		}
		if out.Total != 2*perCluster || len(out.Clusters) != 3 || out.Clusters[1].Reachable || out.Clusters[1].Error == "" ||
			!out.Clusters[0].Reachable || !out.Clusters[2].Reachable {
			t.Fatalf("page %d: total %d, clusters %+v", page, out.Total, out.Clusters)
		}
		if len(out.Guests) > 5 {
			t.Fatalf("page %d has %d guests, limit 5", page, len(out.Guests))
		}
		for _, g := range out.Guests {
			seen = append(seen, fmt.Sprintf("%s/%d", g.Cluster, g.VMID))
		}
		cursor = out.NextCursor
		if cursor == "" {
			break
		}
		if page > 20 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 2*perCluster {
		t.Fatalf("walked %d guests, want %d: %v", len(seen), 2*perCluster, seen)
	}
	for i, s := range seen {
		want := "lab/"
		if i >= perCluster {
			want = "prod/"
		}
		if s[:len(want)] != want || (i > 0 && i != perCluster && s <= seen[i-1] && len(s) == len(seen[i-1])) {
			t.Errorf("guest %d is %s (after %v)", i, s, seen[max(0, i-1)])
		}
	}

	resetRequests(lab, prod)
	for _, bad := range []any{[]string{"lab", "lab"}, []string{"dev"}, []string{}, "all"} {
		res, _ := list(map[string]any{"cluster": bad})
		wantError(t, res, "cluster", "no action was taken")
	}
	if n := len(lab.fake.Requests()) + len(prod.fake.Requests()); n != 0 {
		t.Errorf("%d requests after refused cluster lists", n)
	}
}
