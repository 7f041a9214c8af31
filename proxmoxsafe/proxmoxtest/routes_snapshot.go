package proxmoxtest

import (
	"fmt"
	"strings"
	"time"
)

// handleSnapshotList is GET .../snapshot: the real snapshots, oldest first,
// then the synthesized "current" entry (rec7 qemu-snapshot-list.json).
func handleSnapshotList(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		out := make([]map[string]any, 0, len(g.Snapshots)+1)
		for _, sn := range g.Snapshots {
			e := map[string]any{"name": sn.Name, "description": sn.Description, "snaptime": sn.SnapTime}
			if typ == "qemu" {
				e["vmstate"] = b2i(sn.VMState)
			}
			if sn.Parent != "" {
				e["parent"] = sn.Parent
			}
			out = append(out, e)
		}
		cur := map[string]any{
			"name": "current", "description": "You are here!",
			"running": b2i(g.Status == "running"),
			"digest":  fmt.Sprintf("%040x", uint64(g.VMID)*0x9E3779B97F4A7C15+uint64(len(g.Snapshots))),
		}
		if p := currentSnapshot(g); p != "" {
			cur["parent"] = p
		}
		return append(out, cur), nil
	}
}

// reservedSnapNames are refused synchronously (qemu-server, pve-container).
var reservedSnapNames = map[string][]string{
	"qemu": {"current", "pending"},
	"lxc":  {"current", "vzdump"},
}

// handleSnapshotCreate is POST .../snapshot. Only the reserved-name check is
// synchronous; template, lock and duplicate checks run in the worker
// (pve-guest-common __snapshot_prepare), so they are task errors.
func handleSnapshotCreate(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		name := rc.params["snapname"]
		for _, r := range reservedSnapNames[typ] {
			if strings.EqualFold(name, r) {
				return nil, errf("unable to use snapshot name '%s' (reserved name)", name)
			}
		}
		desc, vmstate := rc.params["description"], rc.flag("vmstate")
		vmid, node := g.VMID, g.Node
		ttype := "qmsnapshot"
		if typ == "lxc" {
			ttype = "vzsnapshot"
		}
		t := rc.s.startTask(node, ttype, vmid, rc.user(), -1, nil, func(c *Cluster, log *[]string) string {
			g := c.guest(vmid)
			if g == nil || g.Node != node {
				return fmt.Sprintf("Configuration file '%s' does not exist", confPath(node, typ, vmid))
			}
			if g.Template {
				return "you can't take a snapshot if it's a template"
			}
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			for _, sn := range g.Snapshots {
				if sn.Name == name {
					return fmt.Sprintf("snapshot name '%s' already used", name)
				}
			}
			sn := &Snapshot{Name: name, Description: desc, SnapTime: time.Now().Unix(), VMState: vmstate && g.Status == "running"}
			sn.Parent = currentSnapshot(g)
			g.CurrentSnapshot = "" // the new snapshot is the newest
			if sn.VMState {
				*log = append(*log, "saving VM state and RAM using storage 'local-lvm'")
			}
			if typ == "qemu" {
				*log = append(*log, fmt.Sprintf("snapshotting 'drive-scsi0' (local-lvm:vm-%d-disk-0)", vmid))
			}
			g.Snapshots = append(g.Snapshots, sn)
			return ""
		})
		return t.UPID, nil
	}
}
