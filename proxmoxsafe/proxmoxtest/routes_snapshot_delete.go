package proxmoxtest

import "fmt"

// snapshotDeleteRoutes are DELETE .../snapshot/{snapname} for both guest
// types (PVE 9.1 schema: node, vmid, snapname, force; VM.Snapshot).
func snapshotDeleteRoutes() []*route {
	snapName := param{name: "snapname", typ: tString, format: "pve-configid", maxLen: 40}
	var rs []*route
	for _, typ := range []string{"qemu", "lxc"} {
		rs = append(rs, &route{
			method: "DELETE", path: "/nodes/{node}/" + typ + "/{vmid}/snapshot/{snapname}",
			params: guestParams(snapName, pBool("force")), perm: vmSnap, proxy: true,
			handle: handleSnapshotDelete(typ),
		})
	}
	return rs
}

// handleSnapshotDelete is DELETE .../snapshot/{snapname}. Like the real
// delsnapshot (qemu-server API2/Qemu.pm, pve-container API2/LXC/Snapshot.pm)
// it only loads the config and forks a qmdelsnapshot/vzdelsnapshot worker;
// every check runs in the worker (AbstractConfig snapshot_delete), so a
// template, a missing snapshot or a locked guest is a task error. A
// deleted snapshot's children move to its parent, and so does the
// guest's current state when it was based on it.
func handleSnapshotDelete(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		name := rc.params["snapname"]
		ttype := "qmdelsnapshot"
		if typ == "lxc" {
			ttype = "vzdelsnapshot"
		}
		return rc.s.guestTask(rc, g, ttype, func(g *Guest) string {
			if g.Template {
				return "you can't delete a snapshot if vm is a template"
			}
			idx := -1
			for i, sn := range g.Snapshots {
				if sn.Name == name {
					idx = i
				}
			}
			if idx < 0 {
				return fmt.Sprintf("snapshot '%s' does not exist", name)
			}
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			gone := g.Snapshots[idx]
			if currentSnapshot(g) == name {
				g.CurrentSnapshot = gone.Parent
			}
			for _, sn := range g.Snapshots {
				if sn.Parent == name {
					sn.Parent = gone.Parent
				}
			}
			g.Snapshots = append(g.Snapshots[:idx:idx], g.Snapshots[idx+1:]...)
			return ""
		})
	}
}
