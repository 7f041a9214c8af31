package routes

import (
	"net/http"
	"slices"
)

// Path-segment patterns for the guard. They are tighter than what the
// validators accept would need: a segment that only validated input can
// produce, so an escaping bug cannot smuggle a different route through.
const (
	segNode = `[A-Za-z0-9-]+`
	segType = `(qemu|lxc)`
	segVMID = `[0-9]+`
	// url.PathEscape writes the "!" of token users ("u@pve!tok") as %21.
	segUPID = `UPID:([A-Za-z0-9:@._-]|%21)+`
	// pve-storage-id.
	segStorage = `[A-Za-z][A-Za-z0-9._-]*`
	// A backup volume id, a vzdump archive or a Proxmox Backup Server
	// snapshot; its "/" are path separators (the guard refuses %2F).
	segBackupVolume = segStorage + `:backup/(vzdump-(qemu|lxc|openvz)-[0-9]+-[0-9_-]+\.[a-z.]+|(vm|ct)/[0-9]+/[0-9T:Z-]+)`
	// pve-configid (a snapshot name).
	segSnap = `[A-Za-z][A-Za-z0-9_-]*`
)

// readRoutes are the GET requests every operation may need.
var readRoutes = []Route{
	mkRoute(http.MethodGet, `/version`),
	mkRoute(http.MethodGet, `/cluster/status`),
	mkRoute(http.MethodGet, `/cluster/resources`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/current`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks/`+segUPID+`/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks/`+segUPID+`/log`),
	// Wider read coverage: guest config (redacted by the library), tasks,
	// storage and backups, Ceph, HA, the token's own permissions. Nothing
	// here can read a secret Proxmox does not already mask, except the
	// guest config, which the library redacts before returning it.
	mkRoute(http.MethodGet, `/nodes`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/config`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/tasks`),
	mkRoute(http.MethodGet, `/storage`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/storage`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/storage/`+segStorage+`/content`),
	mkRoute(http.MethodGet, `/cluster/ceph/status`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/ceph/status`),
	mkRoute(http.MethodGet, `/cluster/ha/status/current`),
	mkRoute(http.MethodGet, `/cluster/ha/resources`),
	mkRoute(http.MethodGet, `/access/permissions`),
	// The backup jobs (backup coverage).
	mkRoute(http.MethodGet, `/cluster/backup`),
	// The next free VMID, and whether a given one is free (provision).
	mkRoute(http.MethodGet, `/cluster/nextid`),
	// What guests report about themselves: a VM's guest agent (its
	// interfaces, OS, host name, file systems, clock; never exec or file
	// access, which the deny list refuses) and a container's interfaces,
	// or its config where the cluster predates them.
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/qemu/`+segVMID+`/agent/(network-get-interfaces|get-osinfo|get-host-name|get-fsinfo|get-time)`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/lxc/`+segVMID+`/interfaces`),
	// A node's health: pending updates, services, disks with SMART, ZFS
	// pools (and one pool's zpool status), replication jobs (node_health).
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/apt/update`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/services`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/disks/list`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/disks/zfs`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/disks/zfs/`+segStorage),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/replication`),
	// Metrics history (RRD) of a node, a guest, a storage.
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/rrddata`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/rrddata`),
	mkRoute(http.MethodGet, `/nodes/`+segNode+`/storage/`+segStorage+`/rrddata`),
}

// The classes whose routes are the API gateway's ([gatewayRoute]) rather
// than a list of patterns.
const (
	classGateway      = "gateway"
	classGatewayWrite = "gateway-write"
)

// classRoutes are the mutating requests each class needs, and nothing
// more, by the class's name.
var classRoutes = map[string][]Route{
	"power": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/(start|shutdown|reboot|stop)`),
	},
	"snapshot": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot`),
	},
	"snapshot-admin": {
		mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap+`/rollback`),
	},
	// Suspend and resume exist for containers too, but only QEMU is
	// offered (see the library's guest_suspend.go).
	"power-extra": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/status/(suspend|resume)`),
	},
	// DELETE of the guest itself, with no parameter but the two the
	// library sends: never skiplock (ignore locks) nor force (destroy a
	// running container).
	"destroy": {
		withQuery(mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID), "purge", "destroy-unreferenced-disks"),
		// One backup volume, its "/" unescaped (the library sends no
		// delay: it waits itself). The deny list covers storage volumes
		// for the gateway; this literal route of DeleteBackup, with its
		// own preconditions, passes before it.
		pastDenyList(mkRoute(http.MethodDelete, `/nodes/`+segNode+`/storage/`+segStorage+`/content/`+segBackupVolume)),
	},
	// Clone a guest; create a VM or a container.
	"provision": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/clone`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType),
	},
	// A migration reads Proxmox's own precheck (a GET, but only the class
	// needs it) and sends one POST.
	"migrate": {
		withQuery(mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/migrate`), "target"),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/migrate`),
	},
	// Back up one guest (vzdump). Only the node's vzdump endpoint: the
	// backup jobs (/cluster/backup) are not this class's.
	"backup": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/vzdump`),
	},
	// Restore a backup to a new guest: the create request, with the
	// archive (the library never sends force).
	"restore": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType),
		// The archive's configuration, which the proof compares the
		// restored guest's with. The deny list covers it for the gateway
		// (raw config text); the library reads it and keeps only digests.
		pastDenyList(withRequiredQuery(mkRoute(http.MethodGet, `/nodes/`+segNode+`/vzdump/extractconfig`), "volume", segBackupVolume)),
	},
	// Grow a disk; set config keys (a VM through the asynchronous POST,
	// a container through PUT, the only method pve-container has).
	"config": {
		// Current and pending values: the fresh state and the proof.
		mkRoute(http.MethodGet, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/pending`),
		mkRoute(http.MethodPut, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/resize`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/config`),
		mkRoute(http.MethodPut, `/nodes/`+segNode+`/lxc/`+segVMID+`/config`),
	},
	// The responder's narrow operations. agent/ping is a POST but changes
	// nothing: it is how ResetGuest learns whether the guest still answers.
	"responder": {
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/status/(start|reboot)`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/status/reset`),
		mkRoute(http.MethodPost, `/nodes/`+segNode+`/qemu/`+segVMID+`/agent/ping`),
		mkRoute(http.MethodDelete, `/nodes/`+segNode+`/`+segType+`/`+segVMID+`/snapshot/`+segSnap),
	},
}

// loginRoute is the ticket login, allowed only with Username/Password
// authentication, in read-only mode too: it changes nothing on the cluster.
var loginRoute = mkRoute(http.MethodPost, `/access/ticket`)

// Classes returns the names of the classes the tables know, the gateway's
// two included, sorted. The library checks it against its own list of
// classes, so a class cannot be misspelt here and silently open nothing.
func Classes() []string {
	out := []string{classGateway, classGatewayWrite}
	for cl := range classRoutes {
		out = append(out, cl)
	}
	slices.Sort(out)
	return out
}
