package proxmoxtest

import "fmt"

// snapshotRollbackRoutes are POST .../snapshot/{snapname}/rollback for
// both guest types (PVE 9.1 schema: node, vmid, snapname, start;
// VM.Snapshot or VM.Snapshot.Rollback, "any").
func snapshotRollbackRoutes() []*route {
	snapName := param{name: "snapname", typ: tString, format: "pve-configid", maxLen: 40}
	perm := &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Snapshot", "VM.Snapshot.Rollback"}, any: true}
	var rs []*route
	for _, typ := range []string{"qemu", "lxc"} {
		rs = append(rs, &route{
			method: "POST", path: "/nodes/{node}/" + typ + "/{vmid}/snapshot/{snapname}/rollback",
			params: guestParams(snapName, pBool("start")), perm: perm, proxy: true,
			handle: handleSnapshotRollback(typ),
		})
	}
	return rs
}

// handleSnapshotRollback is the rollback endpoint. Like the real one
// (qemu-server API2/Qemu.pm rollback, pve-container API2/LXC/Snapshot.pm)
// it forks a qmrollback/vzrollback worker at once; every check runs in
// the worker (AbstractConfig snapshot_rollback): a template, a missing
// snapshot or a locked guest is a task error. The worker stops a running
// guest, makes the snapshot the current state's parent, and starts the
// guest again when the snapshot holds RAM (qemu vmstate) or start=1.
func handleSnapshotRollback(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		name := rc.params["snapname"]
		start := rc.flag("start")
		ttype := "qmrollback"
		if typ == "lxc" {
			ttype = "vzrollback"
		}
		return rc.s.guestTask(rc, g, ttype, func(g *Guest) string {
			var snap *Snapshot
			for _, sn := range g.Snapshots {
				if sn.Name == name {
					snap = sn
				}
			}
			if snap == nil {
				return fmt.Sprintf("snapshot '%s' does not exist", name)
			}
			if g.Template {
				return "you can't rollback if vm is a template"
			}
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			applyPower(g, false)
			g.CurrentSnapshot = name
			if snap.VMState || start {
				applyPower(g, true)
			}
			return ""
		})
	}
}
