package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Reads across the fleet. A list read whose tool is in fleetReads takes,
// besides one cluster's name, "*" (every cluster that offers it) or a list
// of names as its cluster. The clusters are read at once (fleetEach: at
// most fleetReadConcurrency, each bounded by fleetReadTimeout), so the
// call takes about as long as the slowest cluster, not the sum; a cluster
// that cannot be read is reported inline in "clusters" and the others are
// still listed. The page is bounded as one cluster's is (limit, default
// 200): items are ordered by cluster (in the order configured), then as
// the cluster orders them, and next_cursor continues after the last item
// listed, whichever cluster it is on. Every selected cluster is read on
// every page (a listing is one request per cluster whatever the page
// size), so totals and reachability stay current.

// fleetReads are the tools a fleet reads across several clusters.
var fleetReads = map[string]fleetRead{
	ToolListGuests: fleetListGuests,
}

// fleetRead runs one fleet read on targets (in fleet order) with the
// arguments rest (without cluster).
type fleetRead func(ctx context.Context, targets []*adapter, rest json.RawMessage, in func() (*jsonschema.Resolved, error)) (*mcp.CallToolResult, error)

// FleetReadStatus is how one cluster of a fleet read answered.
type FleetReadStatus struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// Total counts what matched there, on all pages.
	Total int `json:"total"`
}

// FleetGuest is a guest of a fleet listing: the cluster it is on, then the
// guest as list_guests lists it.
type FleetGuest struct {
	Cluster string `json:"cluster"`
	proxmoxsafe.Guest
}

// FleetGuestsResult is list_guests over several clusters.
type FleetGuestsResult struct {
	Guests []FleetGuest `json:"guests"`
	// Total counts every guest that matched on the clusters read.
	Total      int               `json:"total"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Clusters   []FleetReadStatus `json:"clusters"`
}

// fleetCursor is "f1:<cluster>:<vmid>" (base64url): continue after that
// guest of that cluster.
const fleetCursorPrefix = "f1:"

func encodeFleetCursor(cluster string, vmid int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fleetCursorPrefix + cluster + ":" + strconv.Itoa(vmid)))
}

func decodeFleetCursor(s string, targets []*adapter) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	bad := &proxmoxsafe.ValidationError{Fields: []proxmoxsafe.FieldError{{Field: "cursor", Problem: "is not a cursor returned by a previous call over these clusters"}}}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, 0, bad
	}
	rest, ok := strings.CutPrefix(string(b), fleetCursorPrefix)
	name, num, ok2 := strings.Cut(rest, ":")
	vmid, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || vmid < 100 {
		return 0, 0, bad
	}
	i := slices.IndexFunc(targets, func(a *adapter) bool { return a.client.Cluster().Name == name })
	if i < 0 {
		return 0, 0, bad
	}
	return i, vmid, nil
}

func fleetListGuests(ctx context.Context, targets []*adapter, rest json.RawMessage, schema func() (*jsonschema.Resolved, error)) (*mcp.CallToolResult, error) {
	in, err := decodeArguments[proxmoxsafe.ListGuestsInput](rest, schema)
	if err != nil {
		var res mcp.CallToolResult
		res.SetError(err)
		return &res, nil
	}
	from, after, err := decodeFleetCursor(in.Cursor, targets)
	if err != nil {
		var res mcp.CallToolResult
		res.SetError(toolError(ctx, ToolListGuests, err))
		return &res, nil
	}
	limit := in.Limit
	if limit == 0 {
		limit = proxmoxsafe.DefaultListLimit
	}
	pages := make([]*proxmoxsafe.ListGuestsResult, len(targets))
	errs := make([]error, len(targets))
	clients := make([]*proxmoxsafe.Client, len(targets))
	for i, a := range targets {
		clients[i] = a.client
	}
	fleetEach(ctx, clients, func(ctx context.Context, i int, _ *proxmoxsafe.Client) {
		one := in
		one.Cursor = ""
		if i == from && after > 0 {
			one.Cursor = proxmoxsafe.GuestsCursorAfter(after)
		}
		_, pages[i], errs[i] = targets[i].listGuests(ctx, one)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &FleetGuestsResult{Guests: []FleetGuest{}, Clusters: make([]FleetReadStatus, len(targets))}
	more := false
	for i, a := range targets {
		name := a.client.Cluster().Name
		st := FleetReadStatus{Name: name}
		if errs[i] != nil {
			st.Error = clusterError(errs[i])
			out.Clusters[i] = st
			continue
		}
		st.Reachable, st.Total = true, pages[i].Total
		out.Total += st.Total
		out.Clusters[i] = st
		if i < from {
			continue
		}
		for _, g := range pages[i].Guests {
			if len(out.Guests) == limit {
				more = true
				break
			}
			out.Guests = append(out.Guests, FleetGuest{Cluster: name, Guest: g})
		}
		if len(out.Guests) == limit && pages[i].NextCursor != "" {
			more = true // this cluster has more; a later one with guests sets it above
		}
	}
	if more && len(out.Guests) > 0 {
		last := out.Guests[len(out.Guests)-1]
		out.NextCursor = encodeFleetCursor(last.Cluster, last.VMID)
	}
	down := 0
	for _, st := range out.Clusters {
		if !st.Reachable {
			down++
		}
	}
	text := fmt.Sprintf("Listed %d of %d guests on %d clusters", len(out.Guests), out.Total, len(targets)-down)
	if down > 0 {
		text += fmt.Sprintf("; %d unreachable", down)
	}
	if out.NextCursor != "" {
		text += fmt.Sprintf("; more with cursor %q", out.NextCursor)
	}
	return structuredResult(text, out), nil
}
