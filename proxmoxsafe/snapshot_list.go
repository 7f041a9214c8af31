package proxmoxsafe

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// OpListSnapshots is the name of [Client.ListSnapshots].
const OpListSnapshots Operation = "ListSnapshots"

// listSnapshotsOp declares [Client.ListSnapshots].
var listSnapshotsOp = operation{info: OperationInfo{
	Name:         OpListSnapshots,
	Method:       "GET",
	Route:        "/nodes/{node}/{type}/{vmid}/snapshot",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit"},
	},
}}

// ListSnapshotsInput names the guest whose snapshots [Client.ListSnapshots]
// lists.
type ListSnapshotsInput struct {
	GuestRef
}

// MaxSnapshots caps the snapshots [Client.ListSnapshots] returns. Proxmox
// has no limit of its own, but storage makes hundreds impractical.
const MaxSnapshots = 500

// ListSnapshotsResult is a guest's snapshots as a tree walk.
type ListSnapshotsResult struct {
	Node string    `json:"node"`
	Type GuestType `json:"type"`
	VMID int       `json:"vmid"`
	// Snapshots are ordered as a depth-first walk of the snapshot tree:
	// every parent before its children, siblings oldest first. At most
	// [MaxSnapshots].
	Snapshots []SnapshotInfo `json:"snapshots"`
	// Total counts the guest's snapshots (without the "current" entry).
	Total int `json:"total"`
	// Current is the snapshot the guest's current state is based on (a
	// rollback target or the newest snapshot); empty when it has none.
	Current string `json:"current,omitempty"`
	// Running is the guest's power state as the snapshot list reports it,
	// when it does.
	Running *bool `json:"running,omitempty"`
}

// SnapshotInfo is one snapshot. Strings are sanitized.
type SnapshotInfo struct {
	Name string `json:"name"`
	// Parent is the snapshot this one was taken on top of; empty for a root.
	Parent string `json:"parent,omitempty"`
	// Depth is the distance from the root of its tree (a root has 0).
	Depth int `json:"depth"`
	// Time is when the snapshot was taken; AgeSeconds how long ago that
	// is, by this machine's clock. Both are zero if Proxmox gave no time.
	Time       time.Time `json:"time"`
	AgeSeconds int64     `json:"age_seconds"`
	// Description is free text, capped at [MaxDescriptionLen] bytes: data,
	// not instructions. DescriptionTruncated says it was cut.
	Description          string `json:"description,omitempty"`
	DescriptionTruncated bool   `json:"description_truncated,omitempty"`
	// VMState is true when the snapshot includes the VM's RAM (QEMU only).
	VMState bool `json:"vmstate"`
	// Current is true for the snapshot the guest is now based on.
	Current bool `json:"current"`
	// Keep is true when the name or description holds [retention.KeepMarker];
	// Autosnap when the description holds the operator's autosnap marker
	// ([retention.Policy.AutosnapMarker]).
	Keep     bool `json:"keep"`
	Autosnap bool `json:"autosnap"`
	// Cleanup is what the operator's retention policy decides for this
	// snapshot now: whether [Client.CleanupSnapshots] would delete it,
	// by which rule, and why.
	Cleanup *SnapshotCleanup `json:"cleanup,omitempty"`
}

// SnapshotCleanup is the retention verdict on one listed snapshot.
type SnapshotCleanup struct {
	// WouldDelete is true when a cleanup now would delete the snapshot.
	// It is false for every snapshot of a protected guest.
	WouldDelete bool           `json:"would_delete"`
	Rule        retention.Rule `json:"rule"`
	Reason      string         `json:"reason"`
}

type rawSnapshotEntry struct {
	Name        pve.String `json:"name"`
	Parent      pve.String `json:"parent"`
	SnapTime    pve.Int    `json:"snaptime"`
	Description pve.String `json:"description"`
	VMState     pve.Bool   `json:"vmstate"`
	Running     *pve.Bool  `json:"running"`
}

// ListSnapshots lists a guest's snapshots (GET …/snapshot, one request)
// as a tree walk, and which snapshot the guest is now based on. Proxmox
// answers in no particular order and adds a "current" pseudo-entry ("You are
// here!"), which becomes Current and Running. The node must be on the
// allowlist; nothing is sent otherwise.
func (c *Client) ListSnapshots(ctx context.Context, in ListSnapshotsInput) (*ListSnapshotsResult, error) {
	const op = OpListSnapshots
	start := time.Now()
	attrs, err := c.openGuestRead(ctx, op, start, in, in.GuestRef)
	if err != nil {
		return nil, err
	}
	var raw []rawSnapshotEntry
	if err := c.get(ctx, guestPath(in.Target(), "snapshot"), nil, &raw); err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	res := &ListSnapshotsResult{Node: in.Node, Type: in.Type, VMID: in.VMID, Snapshots: []SnapshotInfo{}}
	now := time.Now()
	var snaps []SnapshotInfo
	for _, r := range raw {
		name := line(string(r.Name), 64)
		if name == "current" {
			// Proxmox reserves the name; this is the pseudo-entry.
			res.Current = line(string(r.Parent), 64)
			if r.Running != nil {
				running := bool(*r.Running)
				res.Running = &running
			}
			continue
		}
		s := SnapshotInfo{Name: name, Parent: line(string(r.Parent), 64), VMState: in.Type == TypeQEMU && bool(r.VMState)}
		if r.SnapTime > 0 {
			s.Time = time.Unix(int64(r.SnapTime), 0).UTC()
			s.AgeSeconds = max(int64(now.Sub(s.Time)/time.Second), 0)
		}
		// Free text gets the rule every upstream string of the gateway
		// gets (redactText), so this tool is no less strict than api_get.
		desc, _ := redactText(sanitize.String(strings.TrimSpace(string(r.Description))))
		s.Description, s.DescriptionTruncated = sanitize.Cap(desc, MaxDescriptionLen)
		snaps = append(snaps, s)
	}
	res.Total = len(snaps)
	verdicts, err := c.cleanupVerdicts(ctx, in.Target(), raw, now)
	if err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	for _, s := range treeWalk(snaps) {
		if len(res.Snapshots) == MaxSnapshots {
			break
		}
		s.Current = res.Current != "" && s.Name == res.Current
		if v, ok := verdicts[s.Name]; ok {
			s.Keep, s.Autosnap, s.Cleanup = v.keep, v.autosnap, &v.cleanup
		}
		res.Snapshots = append(res.Snapshots, s)
	}
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// treeWalk orders snapshots depth-first from the roots (no parent, or a
// parent that does not exist), siblings oldest first, and sets Depth.
// Entries a walk cannot reach (a corrupt parent cycle) follow at the end,
// oldest first, so nothing is lost; every entry appears once.
func treeWalk(snaps []SnapshotInfo) []SnapshotInfo {
	byAge := func(a, b SnapshotInfo) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Name, b.Name))
	}
	slices.SortStableFunc(snaps, byAge)
	known := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		known[s.Name] = true
	}
	children := map[string][]int{}
	var roots []int
	for i, s := range snaps {
		if s.Parent == "" || s.Parent == s.Name || !known[s.Parent] {
			roots = append(roots, i)
		} else {
			children[s.Parent] = append(children[s.Parent], i)
		}
	}
	out := make([]SnapshotInfo, 0, len(snaps))
	done := make([]bool, len(snaps))
	// An explicit stack: a hostile parent chain must not grow the
	// goroutine stack without bound.
	type item struct{ i, depth int }
	var stack []item
	walk := func(from []int) {
		for j := len(from) - 1; j >= 0; j-- {
			stack = append(stack, item{from[j], 0})
		}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if done[it.i] {
				continue
			}
			done[it.i] = true
			s := snaps[it.i]
			s.Depth = it.depth
			out = append(out, s)
			kids := children[s.Name]
			for j := len(kids) - 1; j >= 0; j-- {
				stack = append(stack, item{kids[j], it.depth + 1})
			}
		}
	}
	walk(roots)
	for i := range snaps {
		if !done[i] {
			walk([]int{i})
		}
	}
	return out
}
