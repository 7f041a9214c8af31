package proxmoxtest

import (
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
)

// repoID is a stable fake git revision for the cluster's version.
func (c *Cluster) repoID() string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte("pve-manager "+c.Version)))
}

func handleVersion(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	return map[string]any{
		"version": c.Version,
		"release": c.release(),
		"repoid":  c.repoID(),
		"console": "html5", // only present when datacenter.cfg sets it; we model a cluster that does
	}, nil
}

// handleClusterStatus follows mgr get_status: a cluster entry only when
// clustered, then one entry per node; a standalone node has nodeid 0.
func handleClusterStatus(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	var out []map[string]any
	if c.Name != "" {
		online := 0
		for _, n := range c.Nodes {
			online += b2i(n.Online)
		}
		out = append(out, map[string]any{
			"type": "cluster", "id": "cluster", "name": c.Name,
			"nodes":   len(c.Nodes),
			"quorate": b2i(online*2 > len(c.Nodes)),
			"version": len(c.Nodes), // corosync config version; grows with each join
		})
	}
	for i, n := range c.Nodes {
		nodeid := i + 1
		if c.Name == "" {
			nodeid = 0
		}
		out = append(out, map[string]any{
			"type": "node", "id": "node/" + n.Name, "name": n.Name, "nodeid": nodeid,
			"ip": n.IP, "online": b2i(n.Online), "local": b2i(i == 0), "level": n.Level,
		})
	}
	return out, nil
}

// nodeEntry is extract_node_stats: usage only for online nodes and only with
// Sys.Audit on the node.
func nodeEntry(rc *reqCtx, n *Node, resources bool) map[string]any {
	e := map[string]any{"id": "node/" + n.Name, "node": n.Name, "type": "node", "status": "offline"}
	if !n.Online {
		return e
	}
	e["status"] = "online"
	e["level"] = n.Level
	if resources {
		e["cgroup-mode"] = 2
	}
	if hasPriv(rc.token, "/nodes/"+n.Name, "Sys.Audit") {
		e["uptime"] = n.Uptime
		e["cpu"] = n.CPU
		e["maxcpu"] = n.CPUs
		e["mem"] = n.Mem
		e["maxmem"] = n.MaxMem
		e["disk"] = n.RootUsed
		e["maxdisk"] = n.RootTotal
	}
	return e
}

// handleClusterResources lists guests (filtered silently by VM.Audit, as PVE
// does), nodes and storages, optionally by type.
func handleClusterResources(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	typ := rc.params["type"]
	out := make([]any, 0, len(c.Guests)+2*len(c.Nodes))
	if typ == "" || typ == "vm" {
		online := make(map[string]bool, len(c.Nodes))
		for _, n := range c.Nodes {
			online[n.Name] = n.Online
		}
		guests := slices.Clone(c.Guests)
		slices.SortFunc(guests, func(a, b *Guest) int { return a.VMID - b.VMID })
		for _, g := range guests {
			if !hasPriv(rc.token, "/vms/"+strconv.Itoa(g.VMID), "VM.Audit") {
				continue
			}
			out = append(out, resourceEntry(c, g, online[g.Node]))
		}
	}
	if typ == "" || typ == "node" {
		for _, n := range c.Nodes {
			out = append(out, nodeEntry(rc, n, true))
		}
	}
	if typ == "" || typ == "storage" {
		out = append(out, storageResources(rc)...) // routes_storage.go
	}
	return out, nil
}

// guestResource is a qemu/lxc entry of /cluster/resources. It is a struct,
// not a map, because this list is the one that gets big (10,000 guests).
type guestResource struct {
	ID       string `json:"id"`
	VMID     int    `json:"vmid"`
	Node     string `json:"node"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	Template int    `json:"template"`
	Status   string `json:"status"`
	*guestUsage
	Tags    string `json:"tags,omitempty"`
	Lock    string `json:"lock,omitempty"`
	HAState string `json:"hastate,omitempty"`
	Pool    string `json:"pool,omitempty"`
}

// guestUsage is only present when the guest's node reports stats.
type guestUsage struct {
	Uptime    int64   `json:"uptime"`
	CPU       float64 `json:"cpu"`
	MaxCPU    int     `json:"maxcpu"`
	Mem       uint64  `json:"mem"`
	MaxMem    uint64  `json:"maxmem"`
	Disk      uint64  `json:"disk"`
	MaxDisk   uint64  `json:"maxdisk"`
	NetIn     uint64  `json:"netin"`
	NetOut    uint64  `json:"netout"`
	DiskRead  uint64  `json:"diskread"`
	DiskWrite uint64  `json:"diskwrite"`
	MemHost   *uint64 `json:"memhost,omitempty"`
}

// resourceEntry builds the entry. Guests on an offline node have no current
// stats: status "unknown" and no usage fields.
func resourceEntry(c *Cluster, g *Guest, nodeOnline bool) guestResource {
	e := guestResource{
		ID: g.Type + "/" + strconv.Itoa(g.VMID), VMID: g.VMID, Node: g.Node, Type: g.Type,
		Name: g.Name, Template: b2i(g.Template), Status: "unknown",
		Tags: strings.Join(g.Tags, ";"), Lock: g.Lock, Pool: g.Pool,
	}
	if nodeOnline {
		st := stats(g)
		e.Status = g.Status
		e.guestUsage = &guestUsage{
			Uptime: g.Uptime, CPU: g.CPU, MaxCPU: g.CPUs, Mem: g.Mem, MaxMem: g.MaxMem,
			Disk: g.Disk, MaxDisk: g.MaxDisk, NetIn: st.netin, NetOut: st.netout,
			DiskRead: st.diskread, DiskWrite: st.diskwrite,
		}
		if g.Type == "qemu" && c.versionAtLeast(9, 0, 0) {
			mem := g.Mem
			e.MemHost = &mem
		}
	}
	if g.HAManaged {
		e.HAState = c.haCRMState(g)
	}
	return e
}

func handleNodes(rc *reqCtx) (any, *apiError) {
	out := make([]map[string]any, 0, len(rc.s.cluster.Nodes))
	for i, n := range rc.s.cluster.Nodes {
		e := nodeEntry(rc, n, false)
		e["ssl_fingerprint"] = nodeFingerprint(rc.s, i, n.Name)
		if _, ok := e["level"]; !ok {
			e["level"] = n.Level
		}
		out = append(out, e)
	}
	return out, nil
}

// nodeFingerprint is the server's real fingerprint for the local node and a
// stable fake one for the others (each node has its own certificate).
func nodeFingerprint(s *Server, i int, name string) string {
	if i == 0 {
		return s.Fingerprint()
	}
	sum := sha256.Sum256([]byte("proxmoxtest node " + name))
	parts := make([]string, len(sum))
	for j, b := range sum {
		parts[j] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// handleNodeStatus mirrors the recorded node status shape: loadavg and
// cpuinfo.mhz/hvm are strings there, everything else numbers.
func handleNodeStatus(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	n := c.node(rc.params["node"])
	kernel := n.Kernel
	if kernel == "" {
		kernel = "6.17.2-1-pve"
	}
	kver := "#1 SMP PREEMPT_DYNAMIC PMX " + strings.TrimSuffix(kernel, "-pve") + " (2025-10-21T11:55Z)"
	model := n.CPUModel
	if model == "" {
		model = "AMD EPYC 7302P 16-Core Processor"
	}
	cores := max(n.CPUs/2, 1)
	mem := map[string]any{"total": n.MaxMem, "used": n.Mem, "free": n.MaxMem - min(n.Mem, n.MaxMem)}
	if c.versionAtLeast(9, 0, 0) {
		mem["available"] = n.MaxMem - min(n.Mem, n.MaxMem)
	}
	rootFree := n.RootTotal - min(n.RootUsed, n.RootTotal)
	out := map[string]any{
		"uptime":     n.Uptime,
		"cpu":        n.CPU,
		"wait":       0.000874,
		"idle":       0,
		"loadavg":    []string{fmt.Sprintf("%.2f", n.LoadAvg[0]), fmt.Sprintf("%.2f", n.LoadAvg[1]), fmt.Sprintf("%.2f", n.LoadAvg[2])},
		"kversion":   "Linux " + kernel + " " + kver,
		"pveversion": "pve-manager/" + c.Version + "/" + c.repoID(),
		"cpuinfo": map[string]any{
			"model": model, "sockets": 1, "cores": cores, "cpus": n.CPUs,
			"mhz": "2999.998", "hvm": "1", "user_hz": 100,
			"flags": "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf pni pclmulqdq monitor ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 cqm rdt_a rdseed adx smap clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr rdpru wbnoinvd arat npt lbrv svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter pfthreshold avic v_vmsave_vmload vgif v_spec_ctrl umip rdpid overflow_recov succor smca sme sev sev_es",
		},
		"memory": mem,
		"swap":   map[string]any{"total": n.SwapTotal, "used": n.SwapUsed, "free": n.SwapTotal - min(n.SwapUsed, n.SwapTotal)},
		"rootfs": map[string]any{"total": n.RootTotal, "used": n.RootUsed, "avail": rootFree, "free": rootFree},
		"ksm":    map[string]any{"shared": 0},
	}
	if c.versionAtLeast(8, 0, 0) {
		out["current-kernel"] = map[string]any{"sysname": "Linux", "release": kernel, "version": kver, "machine": "x86_64"}
		out["boot-info"] = map[string]any{"mode": "efi", "secureboot": 0}
	}
	return out, nil
}
