package proxmoxtest

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Default credentials of the token created when [Cluster.Tokens] is empty.
const (
	// DefaultTokenID is the API token id (user@realm!tokenname) that a
	// cluster without explicit tokens accepts.
	DefaultTokenID = "automation@pve!mcp"
	// DefaultTokenSecret is the secret of [DefaultTokenID]. It is a fake,
	// publicly documented value: never configure it on a real server.
	DefaultTokenSecret = "00000000-0000-4000-8000-000000000000"
)

// DefaultVersion is the pve-manager version a [Cluster] with an empty
// Version reports.
const DefaultVersion = "9.1.1"

// Cluster is the mutable model behind a [Server]. Its fields are exported so
// tests can build one literally; once handed to [NewServer] it belongs to the
// server and must only be read or changed through [Server.View] and
// [Server.Update].
type Cluster struct {
	// Name is the cluster name; "" models a standalone node (then
	// /cluster/status has only node entries, with nodeid 0).
	Name string
	// Version is the pve-manager version, e.g. "9.1.1" (default
	// [DefaultVersion]); the release is major.minor. It selects
	// version-dependent behaviour: "message" in error bodies from 8.3,
	// "Authentication failed!" from 9.1.5, LXC vmid as a string before 8,
	// memhost/pressure fields from 9, the parameters each release's schema
	// has and their enumerations (GET /storage's type: glusterfs before 9,
	// esxi from 8).
	Version string
	// Nodes are the cluster members. Nodes[0] is the node the API client
	// is connected to ("local": 1 in /cluster/status).
	Nodes []*Node
	// Guests are all VMs and containers, on any node.
	Guests []*Guest
	// Tokens maps a token id (user@realm!name) to the token. nil or empty
	// means one [DefaultTokenID] token with every privilege on "/".
	Tokens map[string]*Token
	// Users maps a user id (user@realm) to a user that logs in with a
	// password (POST /access/ticket). nil means none: only tokens work.
	Users map[string]*User
	// Storages are the configured storages (storage.cfg). nil means the
	// defaults of a fresh installation: "local" (dir) and "local-lvm"
	// (lvmthin) on every node, with one backup of each non-template guest
	// on its node's "local"; see [DefaultStorages].
	Storages []*Storage
	// BackupJobs are the scheduled vzdump jobs (jobs.cfg) GET
	// /cluster/backup lists.
	BackupJobs []*BackupJob
	// Ceph is the cluster's Ceph; nil models a cluster without Ceph
	// installed (its endpoints answer 500 "binary not installed").
	Ceph *CephModel
	// Replication are the storage replication jobs (routes_node_health.go).
	Replication []*ReplicationJob
	// RRD shapes the metrics history (rrddata); nil means full history of
	// every node, guest and storage up to now (routes_rrddata.go).
	RRD *RRD
}

// Node is a cluster member.
type Node struct {
	Name   string
	Online bool
	IP     string
	// Level is the subscription level ("" = none, "c", "b", "s", "p").
	Level     string
	CPUs      int
	CPU       float64 // usage, 0..1
	MaxMem    uint64
	Mem       uint64
	RootTotal uint64
	RootUsed  uint64
	SwapTotal uint64
	SwapUsed  uint64
	Uptime    int64
	Kernel    string // kernel release, e.g. "6.17.2-1-pve"
	CPUModel  string
	LoadAvg   [3]float64
	// Health is what the node's health endpoints answer; nil is a healthy
	// node (routes_node_health.go).
	Health *NodeHealth
}

// Guest is a QEMU VM or an LXC container.
type Guest struct {
	VMID int
	Node string
	Type string // "qemu" or "lxc"
	Name string
	// Status is "running" or "stopped".
	Status string
	// Paused is for qemu only: status stays "running", qmpstatus is "paused".
	Paused   bool
	Lock     string
	Template bool
	Tags     []string
	// HAManaged guests get hastart/hastop tasks; HAState is the requested
	// HA state ("started", "stopped", ...: resources.cfg's "state").
	HAManaged bool
	HAState   string
	// HACRMState sets the HA manager's (CRM) state of the resource when it
	// is one the request and the run state do not give: "error",
	// "migrate", "relocate", "fence", "recovery", "freeze", … Empty
	// derives it (haCRMState). status/current's ha.state and
	// /cluster/resources' hastate show the CRM state, as Proxmox does
	// (pve-ha-manager Config.pm get_service_status, pve-manager
	// API2/Cluster.pm). While it is set the manager acts on no power
	// request: an hastart/hastop task still ends OK (it only records the
	// request) and the guest stays as it is.
	HACRMState  string
	Description string
	CPUs        int
	CPU         float64
	MaxMem      uint64
	Mem         uint64
	MaxDisk     uint64
	Disk        uint64
	Uptime      int64
	// Snapshots are the real snapshots, oldest first; the "current"
	// pseudo-entry of the snapshot list is synthesized.
	Snapshots []*Snapshot
	// AgentEnabled is the config's "agent: 1": a QEMU guest agent is
	// configured. Without it agent/ping fails with "No QEMU guest agent
	// configured".
	AgentEnabled bool
	// AgentHung models a configured agent that does not answer (not
	// installed, crashed, or a guest that hangs): agent/ping waits
	// [Server.AgentTimeout] and then fails with "QEMU guest agent is not
	// running", as qemu-server's 3 s guest-ping check does.
	AgentHung bool
	// Pool is the resource pool the guest belongs to ("" for none); it
	// appears as "pool" in /cluster/resources.
	Pool string
	// CurrentSnapshot is the snapshot the guest's current state is based
	// on (the config's "parent" and the parent of the snapshot list's
	// "current" entry); "" means the newest snapshot. It names an older
	// snapshot after a rollback, so that the snapshots form a tree.
	CurrentSnapshot string
	// Config holds more keys of GET .../config, with values exactly as
	// Proxmox returns them (e.g. sshkeys URL-encoded, args as one string).
	// They are added to, or replace, the keys derived from the fields
	// above. A cipassword is answered masked as "**********", as real PVE
	// does; the model keeps the clear value.
	Config map[string]string
	// LXCRaw are a container's raw "lxc.*" config lines, answered as the
	// config key "lxc": a list of [key, value] pairs (PVE's format).
	LXCRaw [][2]string
	// LocalDisks are a VM's volumes on node-local storage, as the
	// migration precheck lists them (routes_migrate.go). The storage is
	// the volid's prefix ("local-lvm:vm-100-disk-0"); a node without that
	// storage (see [Storage.Nodes]) is not an allowed migration target.
	LocalDisks []LocalDisk
	// LocalResources are host devices passed through to a VM ("hostpci0",
	// "usb0"): they pin it to its node, and a migration fails.
	LocalResources []string
	// Pending holds config changes Proxmox could not apply to the running
	// guest (the config's [PENDING] section): GET …/pending shows them,
	// GET …/config shows them unless current=1, and they are applied when
	// the guest starts. PendingDelete lists keys whose deletion waits.
	Pending       map[string]string
	PendingDelete []string
	// Interfaces are the network interfaces seen inside the guest: what a
	// VM's guest agent answers to network-get-interfaces, or `ip a` in a
	// container's network namespace (lxc/{vmid}/interfaces). nil derives
	// the loopback and one NIC with net0's MAC (routes_agent_facts.go).
	Interfaces []NetInterface
	// Agent is what a VM's guest agent reports about the guest (OS, host
	// name, file systems, clock); nil derives a Debian guest.
	Agent *AgentFacts
}

// LocalDisk is one volume of a VM on node-local storage.
type LocalDisk struct {
	VolID string
	Size  uint64
	// CDROM is a local ISO image in a CD-ROM drive.
	CDROM bool
}

// Snapshot is a guest snapshot.
type Snapshot struct {
	Name        string
	Description string
	Parent      string
	SnapTime    int64
	VMState     bool
}

// Token is an API token and its privileges.
type Token struct {
	Secret string
	// Privileges maps an ACL path ("/", "/vms/101", "/nodes/pve1") to
	// privilege names ("VM.Audit", "VM.PowerMgmt", "VM.Snapshot",
	// "Sys.Audit", ...). A privilege on a path applies to that path and
	// everything below it (ACL propagation).
	Privileges map[string][]string
}

// AllPrivileges returns every privilege of a PVE 9 Administrator, which is
// what the default token holds on "/". The slice is new on every call.
func AllPrivileges() []string { return slices.Clone(administratorPrivileges) }

var administratorPrivileges = []string{
	"Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit",
	"Group.Allocate", "Mapping.Audit", "Mapping.Modify", "Mapping.Use",
	"Permissions.Modify", "Pool.Allocate", "Pool.Audit",
	"Realm.Allocate", "Realm.AllocateUser",
	"SDN.Allocate", "SDN.Audit", "SDN.Use",
	"Sys.AccessNetwork", "Sys.Audit", "Sys.Console", "Sys.Incoming", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog",
	"User.Modify",
	"VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU",
	"VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory",
	"VM.Config.Network", "VM.Config.Options", "VM.Console", "VM.GuestAgent.Audit",
	"VM.GuestAgent.FileRead", "VM.GuestAgent.FileSystemMgmt", "VM.GuestAgent.FileWrite",
	"VM.GuestAgent.Unrestricted", "VM.Migrate", "VM.PowerMgmt", "VM.Replicate",
	"VM.Snapshot", "VM.Snapshot.Rollback",
}

// normalize fills the documented defaults. It runs once, when the server
// takes ownership of the cluster.
func (c *Cluster) normalize() {
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.Storages == nil {
		c.Storages = DefaultStorages(c)
	}
	if len(c.Tokens) == 0 {
		c.Tokens = map[string]*Token{DefaultTokenID: {
			Secret:     DefaultTokenSecret,
			Privileges: map[string][]string{"/": AllPrivileges()},
		}}
	}
}

// node returns the named node or nil.
func (c *Cluster) node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// guest returns the guest with that vmid or nil.
func (c *Cluster) guest(vmid int) *Guest {
	for _, g := range c.Guests {
		if g.VMID == vmid {
			return g
		}
	}
	return nil
}

// versionAtLeast reports whether the cluster's pve-manager version is at
// least major.minor.patch. Versions like "7.4-16" (PVE 7 style) parse too.
func (c *Cluster) versionAtLeast(major, minor, patch int) bool {
	v := c.versionParts()
	want := [3]int{major, minor, patch}
	for i := range v {
		if v[i] != want[i] {
			return v[i] > want[i]
		}
	}
	return true
}

func (c *Cluster) versionParts() [3]int {
	var out [3]int
	f := strings.FieldsFunc(c.Version, func(r rune) bool { return r == '.' || r == '-' })
	for i := 0; i < len(f) && i < 3; i++ {
		out[i], _ = strconv.Atoi(f[i])
	}
	return out
}

// release is "major.minor", as /version reports it.
func (c *Cluster) release() string {
	v := c.versionParts()
	return strconv.Itoa(v[0]) + "." + strconv.Itoa(v[1])
}

// clone returns a deep copy of g, so callers outside the lock cannot race
// with the server.
func (g *Guest) clone() Guest {
	cp := *g
	cp.Tags = slices.Clone(g.Tags)
	cp.Config = maps.Clone(g.Config)
	cp.LXCRaw = slices.Clone(g.LXCRaw)
	cp.LocalDisks = slices.Clone(g.LocalDisks)
	cp.LocalResources = slices.Clone(g.LocalResources)
	cp.Pending = maps.Clone(g.Pending)
	cp.PendingDelete = slices.Clone(g.PendingDelete)
	cp.Snapshots = make([]*Snapshot, len(g.Snapshots))
	for i, s := range g.Snapshots {
		sc := *s
		cp.Snapshots[i] = &sc
	}
	return cp
}

// confPath is the path PVE names in "Configuration file ... does not exist".
func confPath(node, typ string, vmid int) string {
	dir := "qemu-server"
	if typ == "lxc" {
		dir = "lxc"
	}
	return "nodes/" + node + "/" + dir + "/" + strconv.Itoa(vmid) + ".conf"
}
