package proxmoxtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Storage is one entry of storage.cfg and what lives on it.
type Storage struct {
	// ID is the storage id, e.g. "local", "nfs-backup".
	ID string
	// Type is the plugin type: "dir", "lvmthin", "nfs", "pbs", "rbd", …
	Type string
	// Content lists the content types, e.g. "backup", "iso", "images".
	Content []string
	// Shared storages show the same content on every node.
	Shared bool
	// Disabled models "disable 1" in storage.cfg: listed, never active.
	Disabled bool
	// Inactive models an enabled storage that cannot be activated (an NFS
	// server that is down): listed with active 0, content listing fails.
	Inactive bool
	// Nodes restricts the storage to these nodes; empty means every node.
	Nodes []string
	// Total and Used are bytes, per node for non-shared storages.
	Total, Used uint64
	// Config holds further storage.cfg properties ("path", "server",
	// "username", "password", …) that GET /storage returns, except the
	// sensitive ones real PVE keeps in /etc/pve/priv and never returns.
	Config map[string]string
	// Backups are the vzdump backups on this storage.
	Backups []*Backup
	// Volumes are the storage's other files by volume name, e.g.
	// "iso/debian-13.iso" or "vztmpl/debian-13-standard_13.1-1_amd64.tar.zst":
	// the content listing returns them (content type = the name's first
	// segment, when the storage holds that content), and creates that name
	// them (an ISO, an OS template) need them to exist.
	Volumes []string

	// rootfs: sizes come from each node's root file system (the default
	// "local" directory storage lives there).
	rootfs bool
}

// Backup is one vzdump backup volume.
type Backup struct {
	VMID int
	// Type is the guest type, "qemu" or "lxc" (the volume's subtype).
	Type string
	// Node is where the file lives on a non-shared storage; "" means every
	// node that has the storage.
	Node string
	// CTime is the creation time, seconds since the epoch; it also names
	// the file (vzdump-qemu-100-2026_01_01-00_00_00.vma.zst).
	CTime int64
	Size  uint64
	// Format defaults to "vma.zst" (qemu) or "tar.zst" (lxc).
	Format string
	// Notes is free text; only its first line is listed, as real PVE does.
	Notes     string
	Protected bool

	// Verification is a Proxmox Backup Server verification state ("ok",
	// "failed"); "" for none (and for file storages).
	Verification string
	// Encrypted is the key fingerprint of a client-side encrypted PBS
	// backup; "" when not encrypted.
	Encrypted string

	// source is the guest as it was backed up (its configuration), for a
	// restore; nil for backups the cluster was made with, which restore
	// the guest as it is now.
	source *Guest
}

// sensitiveStorageProps are never returned by GET /storage (pve-storage
// Plugin.pm sensitive_properties; they live in /etc/pve/priv).
var sensitiveStorageProps = []string{"password", "encryption-key", "keyring", "master-pubkey"}

// storageContentTypes is the pve-storage-content enumeration.
var storageContentTypes = []string{"images", "rootdir", "vztmpl", "iso", "backup", "snippets", "import"}

// storageTypes are the storage plugin types GET /storage filters by
// ("type"), per release, as the schema snapshots 7.4, 8.4 and 9.1 list
// them: 8.x added esxi (the ESXi import storage; missing from 7.4, so
// 8.0.0 by the convention of param.since, though it came later in 8.x)
// and 9.0 dropped glusterfs.
var storageTypes = []enumAt{
	{values: []string{"btrfs", "cephfs", "cifs", "dir", "glusterfs", "iscsi", "iscsidirect", "lvm", "lvmthin", "nfs", "pbs", "rbd", "zfs", "zfspool"}},
	{since: [3]int{8, 0, 0}, values: []string{"btrfs", "cephfs", "cifs", "dir", "esxi", "glusterfs", "iscsi", "iscsidirect", "lvm", "lvmthin", "nfs", "pbs", "rbd", "zfs", "zfspool"}},
	{since: [3]int{9, 0, 0}, values: []string{"btrfs", "cephfs", "cifs", "dir", "esxi", "iscsi", "iscsidirect", "lvm", "lvmthin", "nfs", "pbs", "rbd", "zfs", "zfspool"}},
}

// defaultBackupTime is 2026-01-01 00:00:00 UTC, the ctime of default backups.
const defaultBackupTime = 1767225600

// DefaultStorages returns the storages of a fresh installation for c: a
// "local" directory storage (backup, iso, vztmpl) on each node's root file
// system holding one backup of every non-template guest (notes = guest
// name, the vzdump default), and a "local-lvm" thin pool (images, rootdir).
// A [Cluster] with nil Storages gets these.
func DefaultStorages(c *Cluster) []*Storage {
	local := &Storage{ID: "local", Type: "dir", Content: []string{"backup", "iso", "vztmpl"}, rootfs: true,
		Config: map[string]string{"path": "/var/lib/vz"}}
	for i, g := range c.Guests {
		if g.Template {
			continue
		}
		format := "vma.zst"
		if g.Type == "lxc" {
			format = "tar.zst"
		}
		local.Backups = append(local.Backups, &Backup{
			VMID: g.VMID, Type: g.Type, Node: g.Node, CTime: defaultBackupTime + int64(i)*3600,
			Size: max(g.MaxDisk/8, 1<<30), Format: format, Notes: g.Name,
		})
	}
	lvm := &Storage{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"},
		Total: 800 << 30, Used: 120 << 30, Config: map[string]string{"vgname": "pve", "thinpool": "data"}}
	return []*Storage{local, lvm}
}

func (st *Storage) onNode(node string) bool {
	return len(st.Nodes) == 0 || slices.Contains(st.Nodes, node)
}

func (st *Storage) hasContent(ct string) bool { return slices.Contains(st.Content, ct) }

// sizes returns total and used bytes of the storage as seen on node n.
func (st *Storage) sizes(n *Node) (total, used uint64) {
	if st.rootfs {
		return n.RootTotal, n.RootUsed
	}
	return st.Total, st.Used
}

func (c *Cluster) storage(id string) *Storage {
	for _, st := range c.Storages {
		if st.ID == id {
			return st
		}
	}
	return nil
}

// canSeeStorage is the filter of the storage lists: Datastore.Audit or
// Datastore.AllocateSpace on /storage/<id>.
func canSeeStorage(tok *Token, id string) bool {
	p := "/storage/" + id
	return hasPriv(tok, p, "Datastore.Audit") || hasPriv(tok, p, "Datastore.AllocateSpace")
}

// storageResources are the storage entries of /cluster/resources: one per
// node and enabled storage, filtered by Datastore.Audit (mgr API2/Cluster.pm).
func storageResources(rc *reqCtx) []any {
	c := rc.s.cluster
	var out []any
	for _, n := range c.Nodes {
		for _, st := range c.Storages {
			if st.Disabled || !st.onNode(n.Name) || !hasPriv(rc.token, "/storage/"+st.ID, "Datastore.Audit") {
				continue
			}
			e := map[string]any{
				"id": "storage/" + n.Name + "/" + st.ID, "storage": st.ID, "node": n.Name, "type": "storage",
				"plugintype": st.Type, "shared": b2i(st.Shared), "content": strings.Join(st.Content, ","), "status": "unknown",
			}
			if n.Online && !st.Inactive {
				total, used := st.sizes(n)
				e["status"] = "available"
				e["disk"] = used
				e["maxdisk"] = total
			}
			out = append(out, e)
		}
	}
	return out
}

// handleNodeStorage is GET /nodes/{node}/storage (pve-storage
// API2/Storage/Status.pm index): storages configured for the node that the
// token may see, with usage for active ones.
func handleNodeStorage(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	node := c.node(rc.params["node"])
	var contentFilter []string
	if v := rc.params["content"]; v != "" {
		for ct := range strings.SplitSeq(v, ",") {
			if !slices.Contains(storageContentTypes, ct) {
				return nil, paramErr(map[string]string{"content": fmt.Sprintf("invalid format - invalid content type '%s'\n", ct)})
			}
			contentFilter = append(contentFilter, ct)
		}
	}
	if id := rc.params["storage"]; id != "" {
		if st := c.storage(id); st == nil || !st.onNode(node.Name) {
			return nil, paramErr(map[string]string{"storage": "No such storage."})
		}
	}
	target := rc.params["target"]
	out := []map[string]any{}
	for _, st := range c.Storages {
		if !st.onNode(node.Name) || !canSeeStorage(rc.token, st.ID) {
			continue
		}
		if id := rc.params["storage"]; id != "" && st.ID != id {
			continue
		}
		if rc.flag("enabled") && st.Disabled {
			continue
		}
		if target != "" && target != node.Name && !st.Shared {
			continue
		}
		if len(contentFilter) > 0 && !slices.ContainsFunc(contentFilter, st.hasContent) {
			continue
		}
		e := map[string]any{
			"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","),
			"shared": b2i(st.Shared), "enabled": b2i(!st.Disabled), "active": 0,
		}
		if !st.Disabled && !st.Inactive {
			total, used := st.sizes(node)
			e["active"] = 1
			e["total"] = total
			e["used"] = used
			e["avail"] = total - min(used, total)
			if total > 0 {
				e["used_fraction"] = float64(used) / float64(total)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// handleStorageContent is GET /nodes/{node}/storage/{storage}/content. Only
// backups are modelled. Each volume passes check_volume_access (pve-storage
// Storage.pm): Datastore.Allocate on the storage, or for a backup
// Datastore.AllocateSpace on the storage and VM.Backup on its guest; the
// others are left out silently, as real PVE does — Datastore.Audit alone
// lets the call through but shows no backup.
func handleStorageContent(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	node := rc.params["node"]
	id := rc.params["storage"]
	ct := rc.params["content"]
	if ct != "" && !slices.Contains(storageContentTypes, ct) {
		return nil, paramErr(map[string]string{"content": fmt.Sprintf("invalid format - invalid content type '%s'\n", ct)})
	}
	st := c.storage(id)
	switch {
	case st == nil:
		return nil, errf("storage '%s' does not exist", id)
	case !st.onNode(node):
		return nil, errf("storage '%s' is not available on node '%s'", id, node)
	case st.Disabled:
		return nil, errf("storage '%s' is disabled", id)
	case st.Inactive:
		return nil, errf("storage '%s' is not online", id)
	}
	vmid := -1
	if v, ok := rc.params["vmid"]; ok {
		vmid, _ = strconv.Atoi(v)
	}
	out := volumeEntries(rc, st, ct) // routes_provision.go
	if ct != "" && ct != "backup" {
		return out, nil
	}
	if !st.hasContent("backup") {
		return out, nil
	}
	admin := hasPriv(rc.token, "/storage/"+id, "Datastore.Allocate")
	space := hasPriv(rc.token, "/storage/"+id, "Datastore.AllocateSpace")
	for _, b := range st.Backups {
		if !st.Shared && b.Node != "" && b.Node != node {
			continue
		}
		if vmid >= 0 && b.VMID != vmid {
			continue
		}
		if !admin && !(space && hasPriv(rc.token, "/vms/"+strconv.Itoa(b.VMID), "VM.Backup")) {
			continue
		}
		pbs := st.Type == "pbs"
		format := backupFormat(st, b)
		e := map[string]any{
			"volid":   volidOf(st, b),
			"content": "backup",
			"format":  format,
			"size":    b.Size,
			"ctime":   b.CTime,
			"vmid":    b.VMID,
			"subtype": b.Type,
		}
		if b.Notes != "" {
			first, _, _ := strings.Cut(b.Notes, "\n")
			e["notes"] = first
		}
		if b.Protected {
			e["protected"] = 1
		}
		if pbs && b.Verification != "" {
			// PBSPlugin.pm list_volumes: the last verification's state and upid.
			e["verification"] = map[string]any{"state": b.Verification, "upid": "UPID:pbs:00000001:00000001:00000001:6773A680:verificationjob:store1::root@pam:"}
		}
		if pbs && b.Encrypted != "" {
			e["encrypted"] = b.Encrypted
		}
		out = append(out, e)
	}
	return out, nil
}

// backupVolid names the file as vzdump does, e.g.
// local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst.
func backupVolid(storage string, b *Backup, format string) string {
	ts := time.Unix(b.CTime, 0).UTC().Format("2006_01_02-15_04_05")
	return fmt.Sprintf("%s:backup/vzdump-%s-%d-%s.%s", storage, b.Type, b.VMID, ts, format)
}

// handleStorageIndex is GET /storage (pve-storage API2/Storage/Config.pm):
// the configuration of storages the token may see, without the sensitive
// properties.
func handleStorageIndex(rc *reqCtx) (any, *apiError) {
	out := []map[string]any{}
	for _, st := range rc.s.cluster.Storages {
		if !canSeeStorage(rc.token, st.ID) {
			continue
		}
		if t := rc.params["type"]; t != "" && st.Type != t {
			continue
		}
		e := map[string]any{"storage": st.ID, "type": st.Type, "content": strings.Join(st.Content, ","),
			"digest": fmt.Sprintf("%040x", len(rc.s.cluster.Storages))}
		if st.Shared {
			e["shared"] = 1
		}
		if st.Disabled {
			e["disable"] = 1
		}
		if len(st.Nodes) > 0 {
			e["nodes"] = strings.Join(st.Nodes, ",")
		}
		for k, v := range st.Config {
			if !slices.Contains(sensitiveStorageProps, k) {
				e[k] = v
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// infraRoutes are the storage, backup, Ceph and HA endpoints, with their
// PVE 9.1 schema parameters and permission checks.
func infraRoutes() []*route {
	storageID := param{name: "storage", typ: tString, format: "pve-storage-id"}
	storageOpt := storageID
	storageOpt.optional = true
	storageSeen := &permSpec{path: "/storage/{storage}", privs: []string{"Datastore.Audit", "Datastore.AllocateSpace"}, any: true}
	cephAudit := &permSpec{path: "/", privs: []string{"Sys.Audit", "Datastore.Audit"}, any: true}
	return []*route{
		{method: "GET", path: "/storage", params: []param{pEnumByVersion("type", storageTypes...)}, handle: handleStorageIndex},
		{method: "GET", path: "/nodes/{node}/storage", proxy: true, params: []param{pNode(), pStr("content"), pBool("enabled"), pBool("format"),
			storageOpt, {name: "target", typ: tString, format: "pve-node", optional: true}}, handle: handleNodeStorage},
		{method: "GET", path: "/nodes/{node}/storage/{storage}/content", proxy: true, perm: storageSeen, params: []param{pNode(), storageID,
			pStr("content"), {name: "vmid", typ: tInteger, format: "pve-vmid", min: i64(100), max: i64(999999999), optional: true}},
			handle: handleStorageContent},
		{method: "GET", path: "/cluster/ceph/status", perm: cephAudit, handle: handleCephStatus},
		{method: "GET", path: "/nodes/{node}/ceph/status", proxy: true, perm: cephAudit, params: []param{pNode()}, handle: handleCephStatus},
		{method: "GET", path: "/cluster/ha/status/current", perm: rootAudit, handle: handleHAStatus},
		{method: "GET", path: "/cluster/ha/resources", perm: rootAudit, params: []param{pEnum("type", "ct", "vm")}, handle: handleHAResources},
	}
}
