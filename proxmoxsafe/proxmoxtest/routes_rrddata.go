package proxmoxtest

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"
)

// RRD shapes the metrics history (GET …/rrddata) of a [Cluster]. A nil
// RRD on the cluster means full history for every node, guest and storage
// up to now. Every value is a deterministic function of the series' key
// and the row's time, so two reads of the same step agree.
type RRD struct {
	// Missing are the keys with no RRD file, answered with 500 "RRD
	// error: …" as pmxcfs does for a guest created a moment ago or a VMID
	// that never existed. Keys: "node/<node>", "vm/<vmid>" (containers
	// too: Proxmox keys guest RRDs by VMID only), "storage/<node>/<id>".
	Missing []string
	// Since maps a key to the first time (Unix seconds) with data; rows
	// before carry only "time" (a node booted a few minutes ago: the pve6
	// recording has 62 such rows of 70).
	Since map[string]int64
	// UpgradedAt is when the cluster was upgraded from PVE 8 to 9 (Unix
	// seconds, 0: never). A 9.x answer then starts with rows of the old
	// pve2 file, at its coarser step and with its fields (no memhost, no
	// pressure), and continues at the new step (pve-cluster RRD.pm).
	UpgradedAt int64
	// Now replaces time.Now for the history's end; nil means time.Now.
	Now func() time.Time
}

// rrdLayout is one RRA as the answer shows it: the step and the number of
// rows a timeframe covers.
type rrdLayout struct {
	step int64
	rows int
}

// rrdLayouts are the RRAs per timeframe: PVE ≤ 8 always answers 70 rows
// (pvecluster RRD.pm before 9.0.3; the pve6 and pve7 recordings), PVE 9
// keeps more (RRD.pm 9.0.3/9.0.7; decade for nodes only).
var (
	rrdLayoutsPVE2 = map[string]rrdLayout{
		"hour": {60, 70}, "day": {1800, 70}, "week": {10800, 70}, "month": {43200, 70}, "year": {604800, 70},
	}
	rrdLayoutsPVE9 = map[string]rrdLayout{
		"hour": {60, 60}, "day": {60, 1440}, "week": {1800, 336}, "month": {1800, 1440}, "year": {21600, 1440},
		"decade": {604800, 570},
	}
)

// The data sources of each RRD format (pvecluster pmxcfs/status.c).
var (
	rrdNodeFieldsPVE2  = []string{"loadavg", "maxcpu", "cpu", "iowait", "memtotal", "memused", "swaptotal", "swapused", "roottotal", "rootused", "netin", "netout"}
	rrdNodeFieldsPVE9  = append(slices.Clone(rrdNodeFieldsPVE2), "memavailable", "arcsize", "pressurecpusome", "pressureiosome", "pressureiofull", "pressurememorysome", "pressurememoryfull")
	rrdGuestFieldsPVE2 = []string{"maxcpu", "cpu", "maxmem", "mem", "maxdisk", "disk", "netin", "netout", "diskread", "diskwrite"}
	rrdGuestFieldsPVE9 = append(slices.Clone(rrdGuestFieldsPVE2), "memhost", "pressurecpusome", "pressurecpufull", "pressureiosome", "pressureiofull", "pressurememorysome", "pressurememoryfull")
	// A stopped guest's rows: pvestatd writes U for everything else
	// (pve7 cluster4-qemu-rrddata-hour-stopped.json).
	rrdGuestStoppedFields = []string{"maxcpu", "maxmem", "maxdisk", "disk"}
	rrdStorageFields      = []string{"total", "used"}
)

// rrdTimeframes are the timeframe values: decade is new in 9.0, for
// nodes only (schema).
var rrdTimeframes = []string{"hour", "day", "week", "month", "year"}

func rrdParams(node bool, extra ...param) []param {
	tf := pEnum("timeframe", rrdTimeframes...)
	if node {
		tf = pEnumByVersion("timeframe", enumAt{values: rrdTimeframes},
			enumAt{since: [3]int{9, 0, 0}, values: append(slices.Clone(rrdTimeframes), "decade")})
	}
	tf.optional = false // required; cf defaults to AVERAGE
	return append([]param{pNode(), tf, pEnum("cf", "AVERAGE", "MAX")}, extra...)
}

// rrddataRoutes are the metrics history endpoints. Node and guest rrddata
// have no proxyto: every node answers from its local rrdcached copy, so an
// offline node's history is still served (its rows stop at the time it
// went away); storage rrddata is proxied (mgr Nodes.pm, qs/ct rrddata,
// stor API2/Storage/Status.pm).
func rrddataRoutes() []*route {
	rs := []*route{
		{method: "GET", path: "/nodes/{node}/rrddata", params: rrdParams(true), perm: nodeAudit, handle: handleNodeRRD},
		{method: "GET", path: "/nodes/{node}/storage/{storage}/rrddata", proxy: true, perm: &permSpec{path: "/storage/{storage}",
			privs: []string{"Datastore.Audit", "Datastore.AllocateSpace"}, any: true},
			params: rrdParams(false, param{name: "storage", typ: tString, format: "pve-storage-id"}), handle: handleStorageRRD},
	}
	for _, typ := range []string{"qemu", "lxc"} {
		rs = append(rs, &route{method: "GET", path: "/nodes/{node}/" + typ + "/{vmid}/rrddata", perm: vmAudit,
			params: rrdParams(false, pVMID()), handle: handleGuestRRD})
	}
	return rs
}

// rrdSeries is what one RRD holds: its key, its fields per format and the
// value of a field at a time.
type rrdSeries struct {
	key              string
	fieldsOld, field []string
	value            func(field string, t int64, peak bool) (float64, bool)
	// until: rows after it carry only time (an offline node; 0: none).
	until int64
}

func handleNodeRRD(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	n := c.node(rc.params["node"])
	key := "node/" + rc.params["node"]
	if n == nil {
		return nil, rrdMissing(c, key)
	}
	s := rrdSeries{key: key, fieldsOld: rrdNodeFieldsPVE2, field: rrdNodeFieldsPVE2, value: nodeRRDValue(n)}
	if c.versionAtLeast(9, 0, 0) {
		s.field = rrdNodeFieldsPVE9
	}
	if !n.Online {
		// The node's files stopped growing when it went away; the demo
		// and the tests call that half an hour ago.
		s.until = rrdNow(c).Unix() - 1800
	}
	return rrdAnswer(c, rc, s)
}

func handleGuestRRD(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	vmid := rc.vmid()
	key := fmt.Sprintf("vm/%d", vmid)
	g := c.guest(vmid) // the node in the path is not checked: RRDs are keyed by VMID
	if g == nil {
		return nil, rrdMissing(c, key)
	}
	s := rrdSeries{key: key, fieldsOld: rrdGuestFieldsPVE2, field: rrdGuestFieldsPVE2, value: guestRRDValue(g)}
	if c.versionAtLeast(9, 0, 0) {
		s.field = rrdGuestFieldsPVE9
	}
	if g.Status != "running" {
		s.fieldsOld, s.field = rrdGuestStoppedFields, rrdGuestStoppedFields
	}
	return rrdAnswer(c, rc, s)
}

func handleStorageRRD(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	n := c.node(rc.params["node"])
	id := rc.params["storage"]
	st := c.storage(id)
	key := "storage/" + rc.params["node"] + "/" + id
	if st == nil || n == nil || !st.onNode(n.Name) {
		return nil, rrdMissing(c, key)
	}
	total, used := st.sizes(n)
	s := rrdSeries{key: key, fieldsOld: rrdStorageFields, field: rrdStorageFields,
		value: func(f string, t int64, peak bool) (float64, bool) {
			if f == "total" {
				return float64(total), true
			}
			// Usage creeps up over the year towards today's value.
			age := float64(rrdNow(c).Unix()-t) / (365 * 86400)
			return math.Round(float64(used) * (1 - 0.2*min(max(age, 0), 1)) * (1 + 0.01*wave(id, t, peak))), true
		}}
	if st.Disabled || st.Inactive {
		s.until = 1 // never active: only time
	}
	return rrdAnswer(c, rc, s)
}

// rrdMissing is pmxcfs's answer for a key without a file.
func rrdMissing(c *Cluster, key string) *apiError {
	dir := map[bool]string{true: "pve-%s-9.0", false: "pve2-%s"}[c.versionAtLeast(9, 0, 0)]
	kind, rest := key, ""
	for i := range key {
		if key[i] == '/' {
			kind, rest = key[:i], key[i+1:]
			break
		}
	}
	return errf("RRD error: opening '/var/lib/rrdcached/db/%s/%s': No such file or directory", fmt.Sprintf(dir, kind), rest)
}

func rrdNow(c *Cluster) time.Time {
	if c.RRD != nil && c.RRD.Now != nil {
		return c.RRD.Now()
	}
	return time.Now()
}

// rrdAnswer lays out the rows of one answer: from the oldest to the
// current step, the newest (still filling) step as a row with only time,
// which PVE 9 drops; rows before Since or after until with only time;
// after an upgrade the old file's rows first.
func rrdAnswer(c *Cluster, rc *reqCtx, s rrdSeries) (any, *apiError) {
	if c.RRD != nil && slices.Contains(c.RRD.Missing, s.key) {
		return nil, rrdMissing(c, s.key)
	}
	tf, peak := rc.params["timeframe"], rc.params["cf"] == "MAX"
	now := rrdNow(c).Unix()
	pve9 := c.versionAtLeast(9, 0, 0)
	lay := rrdLayoutsPVE2[tf]
	if pve9 {
		lay = rrdLayoutsPVE9[tf]
	}
	last := now / lay.step * lay.step // the step still filling
	first := last - int64(lay.rows-1)*lay.step
	var since, upgraded int64
	if c.RRD != nil {
		since, upgraded = c.RRD.Since[s.key], c.RRD.UpgradedAt
	}
	row := func(t int64, fields []string) map[string]any {
		r := map[string]any{"time": t}
		if t == last || t < since || (s.until != 0 && t > s.until) {
			return r
		}
		for _, f := range fields {
			if v, ok := s.value(f, t, peak); ok {
				r[f] = v
			}
		}
		return r
	}
	var out []map[string]any
	if pve9 && upgraded > first && upgraded < last {
		old := rrdLayoutsPVE2[tf]
		for t := (first + old.step - 1) / old.step * old.step; t < upgraded; t += old.step {
			out = append(out, row(t, s.fieldsOld))
		}
		first = (upgraded + lay.step - 1) / lay.step * lay.step
	}
	for t := first; t <= last; t += lay.step {
		out = append(out, row(t, s.field))
	}
	if pve9 && len(out) > 0 && len(out[len(out)-1]) == 1 {
		out = out[:len(out)-1] // a trailing row holding only time is dropped (RRD.pm 9.0.7)
	}
	return out, nil
}

// wave is a deterministic load curve in [-1, 1]: a daily rhythm (busy in
// the afternoon, UTC), a weekly one, and noise from the key and the time.
func wave(key string, t int64, peak bool) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", key, t)
	noise := float64(h.Sum64()%1000)/500 - 1
	day := math.Sin(2 * math.Pi * float64(t%86400-6*3600) / 86400)
	week := math.Sin(2 * math.Pi * float64(t%(7*86400)) / (7 * 86400))
	v := 0.6*day + 0.15*week + 0.25*noise
	if peak {
		v = min(1, v+0.25*math.Abs(noise)+0.1)
	}
	return v
}

// around scales base by a wave of relative amplitude amp, never below 0.
func around(base, amp float64, key string, t int64, peak bool) float64 {
	return max(0, base*(1+amp*wave(key, t, peak)))
}

func nodeRRDValue(n *Node) func(string, int64, bool) (float64, bool) {
	k := "node/" + n.Name
	cpu := max(n.CPU, 0.15)
	mem := float64(max(n.Mem, n.MaxMem/4))
	return func(f string, t int64, peak bool) (float64, bool) {
		switch f {
		case "maxcpu":
			return float64(n.CPUs), true
		case "cpu":
			return min(1, around(cpu, 0.7, k+"c", t, peak)), true
		case "iowait":
			return min(1, around(0.02, 0.9, k+"i", t, peak)), true
		case "loadavg":
			return around(cpu*float64(max(n.CPUs, 1)), 0.7, k+"c", t, peak), true
		case "memtotal":
			return float64(n.MaxMem), true
		case "memused":
			return min(float64(n.MaxMem), math.Round(around(mem, 0.15, k+"m", t, peak))), true
		case "memavailable":
			used, _ := nodeRRDValue(n)("memused", t, peak)
			return float64(n.MaxMem) - used, true
		case "arcsize":
			return math.Round(float64(n.MaxMem) / 16), true
		case "swaptotal":
			return float64(n.SwapTotal), true
		case "swapused":
			return float64(n.SwapUsed), true
		case "roottotal":
			return float64(n.RootTotal), true
		case "rootused":
			return float64(n.RootUsed), true
		case "netin":
			return math.Round(around(2e6, 0.8, k+"n", t, peak)), true
		case "netout":
			return math.Round(around(8e5, 0.8, k+"o", t, peak)), true
		case "pressurecpusome":
			return around(3, 1, k+"c", t, peak), true
		case "pressureiosome":
			return around(1.5, 1, k+"i", t, peak), true
		case "pressureiofull":
			return around(0.8, 1, k+"i", t, peak), true
		case "pressurememorysome":
			return around(0.2, 1, k+"m", t, peak), true
		case "pressurememoryfull":
			return around(0.1, 1, k+"m", t, peak), true
		}
		return 0, false
	}
}

func guestRRDValue(g *Guest) func(string, int64, bool) (float64, bool) {
	k := fmt.Sprintf("vm/%d", g.VMID)
	cpu := max(g.CPU, 0.1)
	mem := float64(max(g.Mem, g.MaxMem/3))
	return func(f string, t int64, peak bool) (float64, bool) {
		switch f {
		case "maxcpu":
			return float64(max(g.CPUs, 1)), true
		case "cpu":
			return min(1, around(cpu, 0.9, k+"c", t, peak)), true
		case "maxmem":
			return float64(g.MaxMem), true
		case "mem":
			return min(float64(g.MaxMem), math.Round(around(mem, 0.2, k+"m", t, peak))), true
		case "memhost":
			m, _ := guestRRDValue(g)("mem", t, peak)
			return math.Round(m * 1.08), true
		case "maxdisk":
			return float64(g.MaxDisk), true
		case "disk":
			if g.Type == "qemu" {
				return 0, true // Proxmox cannot see into a VM's file systems
			}
			return float64(g.Disk), true
		case "netin":
			return math.Round(around(4e5, 0.9, k+"n", t, peak)), true
		case "netout":
			return math.Round(around(1.5e5, 0.9, k+"o", t, peak)), true
		case "diskread":
			return math.Round(around(1e6, 1, k+"r", t, peak)), true
		case "diskwrite":
			return math.Round(around(6e5, 1, k+"w", t, peak)), true
		case "pressurecpusome":
			return around(2, 1, k+"c", t, peak), true
		case "pressurecpufull":
			return around(0.5, 1, k+"c", t, peak), true
		case "pressureiosome":
			return around(1, 1, k+"r", t, peak), true
		case "pressureiofull":
			return around(0.5, 1, k+"r", t, peak), true
		case "pressurememorysome", "pressurememoryfull":
			return around(0.05, 1, k+"m", t, peak), true
		}
		return 0, false
	}
}
