package proxmoxtest

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// NodeHealth is what a node's health endpoints answer: pending package
// updates (GET …/apt/update), systemd services (…/services), local disks
// with their SMART verdict (…/disks/list) and ZFS pools (…/disks/zfs).
// A nil [Node.Health] is a healthy, freshly installed node: the standard
// services running, one NVMe disk that passes SMART, no updates, no ZFS
// pool ([DefaultNodeHealth]).
type NodeHealth struct {
	// Updates are the packages apt/update lists (every installed package
	// whose candidate version differs, plus new dependencies without an
	// OldVersion).
	Updates []PackageUpdate
	// Services are the node's services; nil means the defaults.
	Services []NodeService
	// Disks are the local disks.
	Disks []NodeDisk
	// ZFSPools are the pools; NoZFSUtils models a node without
	// zfsutils-linux (500 "zfsutils-linux not installed").
	ZFSPools   []ZFSPool
	NoZFSUtils bool
}

// PackageUpdate is one entry of apt/update (mgr API2/APT.pm).
type PackageUpdate struct {
	Package, Title, Description, Origin, Section, Priority, Arch string
	// OldVersion is empty for a newly required dependency.
	OldVersion, Version string
}

// NodeService is one entry of …/services: the systemd unit's states.
type NodeService struct {
	// Name is the short name ("pveproxy"), Desc its description.
	Name, Desc string
	// ActiveState (active, inactive, failed, …), State (running, dead,
	// exited, failed, …) and UnitState (enabled, disabled, masked, …).
	ActiveState, State, UnitState string
}

// NodeDisk is one disk of …/disks/list (stor Diskmanage.pm get_disks).
type NodeDisk struct {
	DevPath, Model, Serial, Vendor, WWN string
	// Type is ssd, nvme, hdd, usb or unknown.
	Type string
	Size uint64
	// Health is smartctl's verdict: PASSED, OK, FAILED…, or UNKNOWN
	// without SMART.
	Health string
	// Wearout is the remaining life in percent ("100" = new) or "N/A",
	// answered as a number or that string, as Proxmox does.
	Wearout string
	// Used is what uses it (LVM, ZFS, partitions, …); "" when unused.
	Used string
	// RPM is -1 unknown, 0 for an SSD.
	RPM int
}

// ZFSPool is one pool of …/disks/zfs and its detail (…/disks/zfs/{name}).
type ZFSPool struct {
	Name string
	// Health is zpool's state: ONLINE, DEGRADED, FAULTED, OFFLINE,
	// UNAVAIL, REMOVED.
	Health            string
	Size, Alloc, Free uint64
	Frag              int
	Dedup             float64
	// Errors is zpool status' errors line ("" = "No known data errors").
	Errors string
	// Status and Action are zpool status' explanation and advice (only
	// for a pool that is not healthy), Scan the last scrub.
	Status, Action, Scan string
}

// ReplicationJob is one storage replication job (replication.cfg) and
// its state on the source node (/var/lib/pve-manager/pve-replication-state.json).
type ReplicationJob struct {
	// Guest is the replicated guest; JobNum the job's number (id = "<guest>-<jobnum>").
	Guest, JobNum int
	// Target is the node replicated to.
	Target string
	// Schedule is a calendar event; "" is Proxmox's default "*/15".
	Schedule string
	Disable  bool
	Comment  string
	// LastSync is the start of the last successful run, LastTry of the
	// last run (epoch seconds; 0 = never). FailCount counts failures in a
	// row and Error is the last failure's message.
	LastSync, LastTry int64
	FailCount         int
	Error             string
	// Duration is the last run's length in seconds.
	Duration float64
}

// ID is the job id, "<guest>-<jobnum>".
func (j *ReplicationJob) ID() string { return strconv.Itoa(j.Guest) + "-" + strconv.Itoa(j.JobNum) }

// DefaultNodeHealth is the health of a freshly installed, healthy node.
func DefaultNodeHealth() *NodeHealth {
	return &NodeHealth{
		Services: defaultServices(),
		Disks: []NodeDisk{{DevPath: "/dev/nvme0n1", Model: "Samsung SSD 980 PRO 1TB", Serial: "S5GXNF0R000001", Type: "nvme",
			Size: 1_000_204_886_016, Health: "PASSED", Wearout: "98", Used: "LVM", RPM: 0, WWN: "eui.002538b000000001"}},
	}
}

// defaultServices are the services GET /nodes/{node}/services lists on
// PVE 9 (mgr API2/Services.pm $service_name_list), all running.
func defaultServices() []NodeService {
	var out []NodeService
	for _, s := range [][2]string{
		{"chrony", "chrony, an NTP client/server"}, {"corosync", "Corosync Cluster Engine"}, {"cron", "Regular background program processing daemon"},
		{"ksmtuned", "Kernel Samepage Merging (KSM) Tuning Daemon"}, {"postfix", "Postfix Mail Transport Agent (instance -)"},
		{"pve-cluster", "The Proxmox VE cluster filesystem"}, {"pve-firewall", "Proxmox VE firewall"},
		{"pve-ha-crm", "PVE Cluster HA Resource Manager Daemon"}, {"pve-ha-lrm", "PVE Local HA Resource Manager Daemon"},
		{"pvedaemon", "PVE API Daemon"}, {"pvefw-logger", "Proxmox VE firewall logger"}, {"pveproxy", "PVE API Proxy Server"},
		{"pvescheduler", "Proxmox VE scheduler"}, {"pvestatd", "PVE Status Daemon"}, {"spiceproxy", "PVE SPICE Proxy Server"},
		{"sshd", "OpenBSD Secure Shell server"}, {"syslog", "System Logging Service"}, {"systemd-journald", "Journal Service"},
		{"systemd-timesyncd", "Network Time Synchronization"},
	} {
		ns := NodeService{Name: s[0], Desc: s[1], ActiveState: "active", State: "running", UnitState: "enabled"}
		if s[0] == "systemd-timesyncd" {
			// Replaced by chrony on PVE 7 and later: not installed.
			ns = NodeService{Name: s[0], Desc: s[1], ActiveState: "inactive", State: "dead", UnitState: "not-found"}
		}
		out = append(out, ns)
	}
	return out
}

func (n *Node) health() *NodeHealth {
	if n.Health == nil {
		return DefaultNodeHealth()
	}
	return n.Health
}

// nodeHealthRoutes are the node health reads and the replication status.
func nodeHealthRoutes() []*route {
	nodeModify := &permSpec{path: "/nodes/{node}", privs: []string{"Sys.Modify"}}
	guest := param{name: "guest", typ: tInteger, format: "pve-vmid", min: i64(100), max: i64(999999999), optional: true}
	return []*route{
		{method: "GET", path: "/nodes/{node}/apt/update", params: []param{pNode()}, perm: nodeModify, proxy: true, handle: handleAptUpdate},
		{method: "GET", path: "/nodes/{node}/services", params: []param{pNode()}, perm: nodeAudit, proxy: true, handle: handleServices},
		// "or" of Sys.Audit on / and on the node: the ACL propagation of
		// hasPriv makes the node's check cover both.
		{method: "GET", path: "/nodes/{node}/disks/list", params: []param{pNode(), pBool("include-partitions"), pBool("skipsmart"), pEnum("type", "unused", "journal_disks")},
			perm: nodeAudit, proxy: true, handle: handleDiskList},
		{method: "GET", path: "/nodes/{node}/disks/zfs", params: []param{pNode()}, perm: rootAudit, proxy: true, handle: handleZFSList},
		{method: "GET", path: "/nodes/{node}/disks/zfs/{name}", params: []param{pNode(), {name: "name", typ: tString, format: "pve-storage-id"}},
			perm: rootAudit, proxy: true, handle: handleZFSDetail},
		{method: "GET", path: "/nodes/{node}/replication", params: []param{pNode(), guest}, proxy: true, handle: handleReplicationList},
	}
}

func (rc *reqCtx) node() *Node { return rc.s.cluster.node(rc.params["node"]) }

// handleAptUpdate answers the cached list of pending updates (mgr
// API2/APT.pm list_updates; the fake never recomputes it).
func handleAptUpdate(rc *reqCtx) (any, *apiError) {
	out := []any{}
	for _, u := range rc.node().health().Updates {
		m := map[string]any{"Package": u.Package, "Title": u.Title, "Description": u.Description, "Origin": u.Origin,
			"Section": u.Section, "Priority": cmp.Or(u.Priority, "optional"), "Arch": cmp.Or(u.Arch, "amd64"), "Version": u.Version}
		if u.OldVersion != "" {
			m["OldVersion"] = u.OldVersion
		}
		out = append(out, m)
	}
	return out, nil
}

func handleServices(rc *reqCtx) (any, *apiError) {
	svcs := rc.node().health().Services
	if svcs == nil {
		svcs = defaultServices()
	}
	out := []any{}
	for _, s := range svcs {
		out = append(out, map[string]any{"name": s.Name, "service": s.Name, "desc": s.Desc,
			"active-state": s.ActiveState, "state": s.State, "unit-state": s.UnitState})
	}
	return out, nil
}

// handleDiskList answers like get_disks: health and wearout only when
// SMART is read (skipsmart=0), wearout a number or the string "N/A";
// osdid -1 for a disk that is no Ceph OSD; used absent when unused.
func handleDiskList(rc *reqCtx) (any, *apiError) {
	out := []any{}
	for _, d := range rc.node().health().Disks {
		if rc.params["type"] == "unused" && d.Used != "" {
			continue
		}
		m := map[string]any{"devpath": d.DevPath, "model": d.Model, "serial": d.Serial, "size": d.Size, "type": cmp.Or(d.Type, "unknown"),
			"gpt": 1, "mounted": 0, "osdid": -1, "rpm": d.RPM, "vendor": cmp.Or(d.Vendor, "unknown"),
			"wwn": cmp.Or(d.WWN, "unknown"), "by_id_link": "/dev/disk/by-id/" + strings.ReplaceAll(d.Model, " ", "_") + "_" + d.Serial}
		if d.Used != "" {
			m["used"] = d.Used
		}
		if !rc.flag("skipsmart") {
			m["health"] = cmp.Or(d.Health, "UNKNOWN")
			if n, err := strconv.ParseFloat(d.Wearout, 64); err == nil {
				m["wearout"] = n
			} else {
				m["wearout"] = "N/A"
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func handleZFSList(rc *reqCtx) (any, *apiError) {
	h := rc.node().health()
	if h.NoZFSUtils {
		return nil, errf("zfsutils-linux not installed")
	}
	out := []any{}
	for _, p := range h.ZFSPools {
		out = append(out, map[string]any{"name": p.Name, "health": p.Health, "size": p.Size, "alloc": p.Alloc,
			"free": p.Free, "frag": p.Frag, "dedup": cmp.Or(p.Dedup, 1.0)})
	}
	return out, nil
}

// handleZFSDetail answers the parsed `zpool status` of one pool (stor
// API2/Disks/ZFS.pm detail). An unknown pool fails as zpool does.
func handleZFSDetail(rc *reqCtx) (any, *apiError) {
	h := rc.node().health()
	if h.NoZFSUtils {
		return nil, errf("zfsutils-linux not installed")
	}
	name := rc.params["name"]
	i := slices.IndexFunc(h.ZFSPools, func(p ZFSPool) bool { return p.Name == name })
	if i < 0 {
		return nil, errf("command '/sbin/zpool status -P -v %s' failed: exit code 1", name)
	}
	p := h.ZFSPools[i]
	m := map[string]any{"name": p.Name, "state": p.Health, "errors": cmp.Or(p.Errors, "No known data errors"),
		"children": []any{map[string]any{"name": p.Name, "state": p.Health, "read": 0, "write": 0, "cksum": 0, "msg": "",
			"leaf": 0, "children": []any{}}}}
	for k, v := range map[string]string{"status": p.Status, "action": p.Action, "scan": p.Scan} {
		if v != "" {
			m[k] = v
		}
	}
	return m, nil
}

// handleReplicationList is the source node's view (mgr API2/Replication.pm
// status): jobs whose guest lives on {node} now, disabled ones included,
// jobs of missing guests skipped, filtered by VM.Audit on the guest.
func handleReplicationList(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	out := []any{}
	jobs := slices.Clone(c.Replication)
	slices.SortFunc(jobs, func(a, b *ReplicationJob) int { return strings.Compare(a.ID(), b.ID()) })
	for _, j := range jobs {
		g := c.guest(j.Guest)
		if g == nil || g.Node != rc.params["node"] || !hasPriv(rc.token, "/vms/"+strconv.Itoa(j.Guest), "VM.Audit") {
			continue
		}
		if s := rc.params["guest"]; s != "" && s != strconv.Itoa(j.Guest) {
			continue
		}
		m := map[string]any{"id": j.ID(), "guest": j.Guest, "jobnum": j.JobNum, "target": j.Target, "type": "local",
			"source": g.Node, "vmtype": g.Type, "last_sync": j.LastSync, "last_try": j.LastTry, "fail_count": j.FailCount,
			"duration": j.Duration, "next_sync": nextSync(c, j)}
		if j.Schedule != "" {
			m["schedule"] = j.Schedule
		}
		if j.Disable {
			m["disable"] = 1
		}
		if j.Comment != "" {
			m["comment"] = j.Comment
		}
		if j.Error != "" {
			m["error"] = j.Error
		}
		out = append(out, m)
	}
	return out, nil
}

// nextSync follows ReplicationState.pm: 0 while the target is offline,
// after failures last_try + 5 min × fail_count (at most 3), else + 30
// min; otherwise the next quarter hour after the last try.
func nextSync(c *Cluster, j *ReplicationJob) int64 {
	if t := c.node(j.Target); t == nil || !t.Online {
		return 0
	}
	switch {
	case j.FailCount > 3:
		return j.LastTry + 30*60
	case j.FailCount > 0:
		return j.LastTry + int64(j.FailCount)*5*60
	}
	return (j.LastTry/900 + 1) * 900
}
