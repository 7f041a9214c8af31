package proxmoxsafe_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestListSnapshotsTree(t *testing.T) {
	t.Parallel()
	c := testCluster()
	// A tree, given out of order (Proxmox answers in hash order):
	//   base ─┬─ v1 ── v1b
	//         └─ v2            (current: after a rollback to base, v2 was taken)
	//   orphan (its parent was deleted by hand)
	c.Guests[0].Snapshots = []*proxmoxtest.Snapshot{
		{Name: "v2", Parent: "base", SnapTime: 400, Description: "second branch"},
		{Name: "v1b", Parent: "v1", SnapTime: 300, VMState: true},
		{Name: "orphan", Parent: "gone", SnapTime: 50},
		{Name: "base", SnapTime: 100, Description: "clean install"},
		{Name: "v1", Parent: "base", SnapTime: 200},
	}
	c.Guests[0].CurrentSnapshot = "v2"
	e := newEnvWith(t, c, nil)
	r, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range r.Snapshots {
		order = append(order, fmt.Sprintf("%s@%d", s.Name, s.Depth))
	}
	if want := []string{"orphan@0", "base@0", "v1@1", "v1b@2", "v2@1"}; !slices.Equal(order, want) {
		t.Errorf("order = %v, want %v", order, want)
	}
	if r.Total != 5 || r.Current != "v2" || r.Running == nil || !*r.Running {
		t.Errorf("total %d, current %q, running %v", r.Total, r.Current, r.Running)
	}
	byName := map[string]proxmoxsafe.SnapshotInfo{}
	for _, s := range r.Snapshots {
		byName[s.Name] = s
	}
	v1b := byName["v1b"]
	if !v1b.VMState || v1b.Parent != "v1" || !v1b.Time.Equal(time.Unix(300, 0)) || v1b.AgeSeconds < time.Now().Unix()-301 || v1b.Current {
		t.Errorf("v1b = %+v", v1b)
	}
	if s := byName["v2"]; !s.Current || s.Description != "second branch" {
		t.Errorf("v2 = %+v", s)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /nodes/pve1/qemu/100/snapshot"}) {
		t.Errorf("requests = %v", got)
	}
}

func TestListSnapshotsEmptyAndLXC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 0 || r.Snapshots == nil || len(r.Snapshots) != 0 || r.Current != "" || r.Running == nil || *r.Running {
		t.Errorf("no snapshots: %+v", r)
	}
	r, err = e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 1 || r.Snapshots[0].Name != "before" || r.Snapshots[0].Description != "first" || !r.Snapshots[0].Current || r.Current != "before" {
		t.Errorf("lxc: %+v", r)
	}
}

func TestListSnapshotsBoundsAndSanitizing(t *testing.T) {
	t.Parallel()
	c := testCluster()
	var snaps []*proxmoxtest.Snapshot
	parent := ""
	for i := range 700 {
		name := fmt.Sprintf("s%04d", i)
		snaps = append(snaps, &proxmoxtest.Snapshot{Name: name, Parent: parent, SnapTime: int64(1000 + i)})
		parent = name
	}
	snaps[0].Description = "line1\n\x1b]0;title\x07ok \u200binvisible\u202eRTL\u2066 " + strings.Repeat("x", 2000)
	c.Guests[1].Snapshots = snaps
	e := newEnvWith(t, c, nil)
	r, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Snapshots) != proxmoxsafe.MaxSnapshots || r.Total != 700 || r.Current != "s0699" {
		t.Errorf("%d shown of %d, current %q", len(r.Snapshots), r.Total, r.Current)
	}
	if r.Snapshots[0].Name != "s0000" || r.Snapshots[499].Depth != 499 {
		t.Errorf("first %+v, last depth %d", r.Snapshots[0].Name, r.Snapshots[499].Depth)
	}
	d := r.Snapshots[0]
	if len(d.Description) > proxmoxsafe.MaxDescriptionLen || !d.DescriptionTruncated || !strings.HasPrefix(d.Description, "line1\nok invisibleRTL x") {
		t.Errorf("description (%d bytes, truncated %v) = %q", len(d.Description), d.DescriptionTruncated, d.Description[:40])
	}
	b, _ := json.Marshal(r)
	for _, bad := range []string{"\\u001b", "\\u0007", "\u200b", "\u202e", "\u2066"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("result contains %q", bad)
		}
	}
}

// TestListSnapshotsParentCycle: a corrupt config with a parent cycle must
// not hang or lose entries.
func TestListSnapshotsParentCycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/nodes/pve1/qemu/101/snapshot", Status: 200, Body: []byte(`{"data":[
		{"name":"a","parent":"b","snaptime":2},{"name":"b","parent":"a","snaptime":1},{"name":"self","parent":"self","snaptime":3},
		{"name":"current","parent":"a","description":"You are here!","digest":"x"}]}`)})
	r, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Snapshots {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"self", "b", "a"}) || r.Running != nil || r.Current != "a" {
		t.Errorf("names %v, running %v, current %q", names, r.Running, r.Current)
	}
}

func TestListSnapshotsRetentionVerdicts(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Retention.MaxCount = 3 })
	res, err := e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Snapshots {
		if s.Cleanup == nil {
			t.Fatalf("%s has no cleanup verdict", s.Name)
		}
		got[s.Name] = strings.Join([]string{boolWord(s.Keep, "keep"), boolWord(s.Autosnap, "auto"), boolWord(s.Cleanup.WouldDelete, "delete"), string(s.Cleanup.Rule)}, ",")
		if s.Cleanup.Reason == "" {
			t.Errorf("%s: no reason", s.Name)
		}
	}
	want := map[string]string{
		"keep-golden": "keep,-,-,keep-marker",
		"old-manual":  "-,-,delete,max-age",
		"auto1":       "-,auto,delete,max-count",
		"auto2":       "-,auto,-,within-limits",
		"manual1":     "-,-,delete,max-count",
		"auto3":       "-,auto,-,within-limits",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	// A protected guest: the policy's verdict is shown, but nothing would go.
	res, err = e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Snapshots {
		if s.Cleanup.WouldDelete {
			t.Errorf("protected guest: %s would be deleted", s.Name)
		}
		if s.Name == "old-manual" && !strings.Contains(s.Cleanup.Reason, "protected") {
			t.Errorf("old-manual reason = %q", s.Cleanup.Reason)
		}
	}
}

func boolWord(b bool, w string) string {
	if b {
		return w
	}
	return "-"
}
