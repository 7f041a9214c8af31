package proxmoxtest

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// route is one endpoint: method, path template, its parameters as the PVE
// 9.1 schema declares them, the schema's permission check, whether pveproxy
// forwards it to {node}, and the handler.
type route struct {
	method string
	path   string
	segs   []string
	params []param
	perm   *permSpec // nil: "user: all" (the handler checks what it needs)
	proxy  bool
	handle func(rc *reqCtx) (any, *apiError)
	// since is the first pve-manager version that has the endpoint
	// (major, minor, patch); older clusters answer 501 like for any
	// unknown path. Zero: every version.
	since [3]int
}

// routes is the route table, built on first use: every start of the
// binary links this package (for --demo), few use it, and building it at every start
// would cost every start.
var routes = sync.OnceValue(buildRoutes)

func guestParams(extra ...param) []param {
	return append([]param{pNode(), pVMID()}, extra...)
}

var (
	vmAudit   = &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Audit"}}
	vmPower   = &permSpec{path: "/vms/{vmid}", privs: []string{"VM.PowerMgmt"}}
	vmSnap    = &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Snapshot"}}
	nodeAudit = &permSpec{path: "/nodes/{node}", privs: []string{"Sys.Audit"}}
	rootAudit = &permSpec{path: "/", privs: []string{"Sys.Audit"}}
)

func buildRoutes() []*route {
	snapName := param{name: "snapname", typ: tString, format: "pve-configid", maxLen: 40}
	configParams := guestParams(pBool("current"), param{name: "snapshot", typ: tString, format: "pve-configid", maxLen: 40, optional: true})
	upid := param{name: "upid", typ: tString}
	min0 := i64(0)
	rs := []*route{
		{method: "GET", path: "/version", handle: handleVersion},
		{method: "GET", path: "/cluster/status", perm: rootAudit, handle: handleClusterStatus},
		{method: "GET", path: "/cluster/resources", params: []param{pEnum("type", "vm", "storage", "node", "sdn")}, handle: handleClusterResources},
		{method: "GET", path: "/nodes", handle: handleNodes},
		{method: "GET", path: "/nodes/{node}/status", params: []param{pNode()}, perm: nodeAudit, proxy: true, handle: handleNodeStatus},
		{method: "GET", path: "/nodes/{node}/qemu", params: []param{pNode(), pBool("full")}, proxy: true, handle: handleGuestList("qemu")},
		{method: "GET", path: "/nodes/{node}/lxc", params: []param{pNode()}, proxy: true, handle: handleGuestList("lxc")},
		{method: "GET", path: "/access/permissions", params: []param{pStr("path"), {name: "userid", typ: tString, optional: true, pattern: regexp.MustCompile(`^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+(?:![A-Za-z][A-Za-z0-9.\-_]+)?$`)}}, handle: handleAccessPermissions},

		{method: "GET", path: "/nodes/{node}/tasks", proxy: true, params: []param{pNode(), pBool("errors"), pInt("limit", min0), pInt("since", nil),
			pEnum("source", "archive", "active", "all"), pInt("start", min0), pStr("statusfilter"), pStr("typefilter"), pInt("until", nil),
			pStr("userfilter"), {name: "vmid", typ: tInteger, format: "pve-vmid", min: i64(100), max: i64(999999999), optional: true}}, handle: handleTaskList},
		{method: "GET", path: "/nodes/{node}/tasks/{upid}/status", proxy: true, params: []param{pNode(), upid}, handle: handleTaskStatus},
		{method: "GET", path: "/nodes/{node}/tasks/{upid}/log", proxy: true, params: []param{pNode(), upid, pBool("download"), pInt("limit", min0), pInt("start", min0)}, handle: handleTaskLog},
	}
	for _, typ := range []string{"qemu", "lxc"} {
		base := "/nodes/{node}/" + typ + "/{vmid}"
		rs = append(rs,
			&route{method: "GET", path: base + "/status/current", params: guestParams(), perm: vmAudit, proxy: true, handle: handleStatusCurrent(typ)},
			&route{method: "GET", path: base + "/config", params: configParams, perm: vmAudit, proxy: true, handle: handleGuestConfig(typ)},
			&route{method: "GET", path: base + "/snapshot", params: guestParams(), perm: vmAudit, proxy: true, handle: handleSnapshotList(typ)},
		)
		snapParams := guestParams(snapName, pStr("description"))
		if typ == "qemu" {
			snapParams = append(snapParams, pBool("vmstate"))
		}
		rs = append(rs, &route{method: "POST", path: base + "/snapshot", params: snapParams, perm: vmSnap, proxy: true, handle: handleSnapshotCreate(typ)})
		for action, ps := range powerParams(typ) {
			rs = append(rs, &route{method: "POST", path: base + "/status/" + action, params: ps, perm: vmPower, proxy: true, handle: handlePower(typ, action)})
		}
	}
	rs = append(rs, infraRoutes()...)            // storage, backups, Ceph, HA: routes_storage.go, routes_ceph.go, routes_ha.go
	rs = append(rs, agentRoutes()...)            // routes_agent.go
	rs = append(rs, lxcInterfacesRoutes()...)    // routes_lxc_interfaces.go
	rs = append(rs, snapshotDeleteRoutes()...)   // routes_snapshot_delete.go
	rs = append(rs, snapshotRollbackRoutes()...) // routes_snapshot_rollback.go
	rs = append(rs, accessRoutes()...)           // routes_access.go
	rs = append(rs, provisionRoutes()...)        // routes_provision.go
	rs = append(rs, destroyRoutes()...)          // routes_destroy.go
	rs = append(rs, migrateRoutes()...)          // routes_migrate.go
	rs = append(rs, configWriteRoutes()...)      // routes_config_write.go
	rs = append(rs, backupRoutes()...)           // routes_backup.go
	rs = append(rs, nodeHealthRoutes()...)       // routes_node_health.go
	rs = append(rs, rrddataRoutes()...)          // routes_rrddata.go
	for _, rt := range rs {
		rt.segs = strings.Split(strings.Trim(rt.path, "/"), "/")
	}
	return rs
}

// powerParams lists the power actions of each guest type with their schema
// parameters (PVE 9.1). LXC has no reset; LXC suspend/resume exist but are
// experimental (CRIU).
func powerParams(typ string) map[string][]param {
	min0 := i64(0)
	timeout := pInt("timeout", min0)
	if typ == "lxc" {
		return map[string][]param{
			"start":    guestParams(pBool("skiplock"), pBool("debug")),
			"stop":     guestParams(pBool("skiplock"), pBool("overrule-shutdown").at(8, 0, 0)),
			"shutdown": guestParams(timeout, pBool("forceStop")),
			"reboot":   guestParams(timeout),
			"suspend":  guestParams(),
			"resume":   guestParams(),
		}
	}
	return map[string][]param{
		"start": guestParams(pBool("skiplock"), timeout, pStr("machine"), pStr("force-cpu"),
			param{name: "migratedfrom", typ: tString, format: "pve-node", optional: true},
			pStr("migration_network"), pEnum("migration_type", "secure", "insecure"),
			param{name: "nets-host-mtu", typ: tString, optional: true, pattern: regexp.MustCompile(`^net\d+=\d+(,net\d+=\d+)*$`), since: [3]int{8, 0, 0}},
			param{name: "stateuri", typ: tString, maxLen: 128, optional: true},
			pStr("targetstorage"), pBool("with-conntrack-state").at(9, 0, 0)),
		"stop": guestParams(pBool("skiplock"), timeout, pBool("keepActive"), pBool("overrule-shutdown").at(8, 0, 0),
			param{name: "migratedfrom", typ: tString, format: "pve-node", optional: true}),
		"shutdown": guestParams(pBool("skiplock"), timeout, pBool("forceStop"), pBool("keepActive")),
		"reboot":   guestParams(timeout),
		"reset":    guestParams(pBool("skiplock")),
		"suspend":  guestParams(pBool("skiplock"), pBool("todisk"), param{name: "statestorage", typ: tString, format: "pve-storage-id", optional: true}),
		"resume":   guestParams(pBool("skiplock"), pBool("nocheck")),
	}
}

// findRoute matches method and path like PVE's find_handler: literal
// segments must be equal, {name} segments match any non-empty segment. A
// trailing {volume} takes the rest of the path: a volume id holds a "/"
// ("local:backup/vzdump-…"), sent as is or as %2F, which the path
// carries decoded (real clients send both; pve6
// storage-content-delete-backup.json was sent unescaped).
func findRoute(method, rel string) (*route, map[string]string) {
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	for _, rt := range routes() {
		segs := segs
		if n := len(rt.segs); n > 0 && rt.segs[n-1] == "{volume}" && len(segs) > n {
			segs = append(slices.Clone(segs[:n-1]), strings.Join(segs[n-1:], "/"))
		}
		if rt.method != method || len(rt.segs) != len(segs) {
			continue
		}
		uri := map[string]string{}
		ok := true
		for i, s := range rt.segs {
			if strings.HasPrefix(s, "{") {
				if segs[i] == "" {
					ok = false
					break
				}
				uri[strings.Trim(s, "{}")] = segs[i]
			} else if s != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return rt, uri
		}
	}
	return nil, nil
}
