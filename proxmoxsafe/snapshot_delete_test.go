package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestDeleteSnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassSnapshotAdmin} })
	in := func(name string) proxmoxsafe.DeleteSnapshotInput {
		return proxmoxsafe.DeleteSnapshotInput{
			GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200},
			Name:     name,
			Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("delsnapshot", proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: name})},
		}
	}
	if _, err := e.client.DeleteSnapshot(ctx, in("nope")); !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "no snapshot named nope") {
		t.Errorf("missing snapshot: %v", err)
	}
	if _, err := e.client.DeleteSnapshot(ctx, in("current")); !errors.Is(err, proxmoxsafe.ErrInvalidInput) { // refused before any request
		t.Errorf("the current pseudo-snapshot: %v", err)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Fatalf("mutating requests after refusals: %v", m)
	}
	// It deletes what it is told to, keep marker or not.
	r, err := e.client.DeleteSnapshot(ctx, in("keep-golden"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Task.Type != "vzdelsnapshot" {
		t.Errorf("task type %s", r.Task.Type)
	}
	if got := nonGET(e); !slices.Equal(got, []string{"DELETE /nodes/pve1/lxc/200/snapshot/keep-golden"}) {
		t.Errorf("non-GET requests = %v", got)
	}
	// The responder class alone does not allow a direct deletion.
	r2 := newResponderEnv(t, nil)
	if _, err := r2.client.DeleteSnapshot(ctx, in("auto1")); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "snapshot-admin") {
		t.Errorf("delete with only the responder class: %v", err)
	}
}

func delSnapIn(vmid int, snap string, force bool) proxmoxsafe.DeleteSnapshotInput {
	in := proxmoxsafe.DeleteSnapshotInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: vmid}, Name: snap, Force: force}
	p := proxmoxsafe.ApprovalPhrase("delsnapshot", proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: vmid, Snapshot: snap})
	if force {
		p += " force=1"
	}
	in.Approval = p
	return in
}
