package proxmoxtest

import (
	"fmt"
	"slices"
	"strings"
)

// Migration: GET …/migrate (Proxmox's own precheck) and POST …/migrate
// for both guest types, after qemu-server API2/Qemu.pm
// migrate_vm_precondition / migrate_vm and QemuMigrate.pm, and
// pve-container API2/LXC.pm migrate_vm / LXC/Migrate.pm. The container
// precheck exists from PVE 9 only (the 8.4 and 7.4 schemas lack it).
func migrateRoutes() []*route {
	perm := &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Migrate"}}
	target := param{name: "target", typ: tString, format: "pve-node"}
	optTarget := target
	optTarget.optional = true
	min0 := i64(0)
	return []*route{
		{method: "GET", path: "/nodes/{node}/qemu/{vmid}/migrate", params: guestParams(optTarget), perm: perm, proxy: true,
			handle: handleMigratePrecheck("qemu")},
		{method: "GET", path: "/nodes/{node}/lxc/{vmid}/migrate", params: guestParams(optTarget), perm: perm, proxy: true,
			handle: handleMigratePrecheck("lxc"), since: [3]int{9, 0, 0}},
		{method: "POST", path: "/nodes/{node}/qemu/{vmid}/migrate", perm: perm, proxy: true,
			params: guestParams(target, pBool("online"), pBool("with-local-disks"), pBool("force"), pInt("bwlimit", min0),
				pStr("migration_network"), pEnum("migration_type", "secure", "insecure"), pStr("targetstorage"), pBool("with-conntrack-state").at(9, 0, 0)),
			handle: handleMigrate("qemu")},
		{method: "POST", path: "/nodes/{node}/lxc/{vmid}/migrate", perm: perm, proxy: true,
			params: guestParams(target, pBool("online"), pBool("restart"), pInt("timeout", nil),
				param{name: "bwlimit", typ: tNumber, min: min0, optional: true}, pStr("target-storage")),
			handle: handleMigrate("lxc")},
	}
}

// unavailableStorages lists the storages of g's local disks that node
// lacks (check_local_storage_availability): such a node is not an allowed
// target.
func unavailableStorages(c *Cluster, g *Guest, node string) []string {
	var out []string
	for _, d := range g.LocalDisks {
		id, _, _ := strings.Cut(d.VolID, ":")
		if st := c.storage(id); (st == nil || !st.onNode(node)) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// migrationTargets splits the other cluster nodes into allowed and not
// allowed ones. Like Proxmox it looks at storage only: an offline node is
// still "allowed" (the migration task fails when it cannot connect).
func migrationTargets(c *Cluster, g *Guest) (allowed []string, notAllowed map[string]any) {
	allowed, notAllowed = []string{}, map[string]any{}
	for _, n := range c.Nodes {
		if n.Name == g.Node {
			continue
		}
		if miss := unavailableStorages(c, g, n.Name); len(miss) > 0 {
			notAllowed[n.Name] = map[string]any{"unavailable_storages": miss}
			continue
		}
		allowed = append(allowed, n.Name)
	}
	return allowed, notAllowed
}

// handleMigratePrecheck is GET …/migrate. For a VM it checks the lock
// first (500 "VM is locked (…)"), then lists local disks and devices and
// the nodes whose storage fits; PVE 7 lists the nodes only for a stopped
// VM. The container answer (PVE 9) has hyphenated keys.
func handleMigratePrecheck(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		c := rc.s.cluster
		running := g.Status == "running"
		allowed, notAllowed := migrationTargets(c, g)
		if typ == "lxc" {
			return map[string]any{"running": b2i(running), "allowed-nodes": allowed, "not-allowed-nodes": notAllowed}, nil
		}
		if msg := lockCheck(g); msg != "" {
			return nil, errf("%s", msg)
		}
		disks := make([]map[string]any, 0, len(g.LocalDisks))
		for _, d := range g.LocalDisks {
			disks = append(disks, map[string]any{"volid": d.VolID, "size": d.Size})
		}
		res := map[string]any{
			"running":         b2i(running),
			"local_disks":     disks,
			"local_resources": append([]string{}, g.LocalResources...),
		}
		if !running || c.versionAtLeast(8, 0, 0) {
			res["allowed_nodes"], res["not_allowed_nodes"] = allowed, notAllowed
		}
		if c.versionAtLeast(8, 0, 0) {
			res["mapped-resources"], res["mapped-resource-info"] = []string{}, map[string]any{}
		}
		if c.versionAtLeast(9, 0, 0) {
			res["has-dbus-vmstate"] = 0
		}
		return res, nil
	}
}

// handleMigrate is POST …/migrate. Synchronous checks, in the order of
// the real handlers: target is the local node (400), unknown target (500),
// root-only options (400), the config (500), the lock (VM only, 500), a
// running guest without --online (VM) or --online/--restart (CT) (500).
// An HA-managed guest gets an hamigrate task that only asks the HA
// manager; the fake moves the guest when that task ends (the real LRM
// runs the migration shortly after). Everything else fails inside the
// qmigrate/vzmigrate task ("migration aborted", the reason in the log),
// and on success the guest is on the target node, in the power state it
// had (a restart-mode container restarted).
func handleMigrate(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		c := rc.s.cluster
		target := rc.params["target"]
		if target == rc.params["node"] {
			return nil, paramErr(map[string]string{"target": "target is local node."})
		}
		if c.node(target) == nil {
			return nil, errf("no such cluster node '%s'", target)
		}
		// qemu-server tests "$param->{force} && $authuser ne 'root@pam'":
		// Perl truth, so force=0 (or an empty value) passes.
		for _, p := range []string{"force", "migration_type", "migration_network"} {
			if v := rc.params[p]; v != "" && v != "0" {
				return nil, paramErr(map[string]string{p: "Only root may use this option."})
			}
		}
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		kind := "VM"
		if typ == "lxc" {
			kind = "CT"
		}
		running := g.Status == "running"
		switch {
		case typ == "qemu" && lockCheck(g) != "":
			return nil, errf("%s", lockCheck(g))
		case typ == "qemu" && running && !rc.flag("online"):
			return nil, errf("can't migrate running VM without --online")
		case typ == "lxc" && running && !rc.flag("online") && !rc.flag("restart"):
			return nil, errf("can't migrate running container without --online or --restart")
		}
		vmid := g.VMID
		if g.HAManaged {
			t := rc.s.startTask(g.Node, "hamigrate", vmid, rc.user(), -1,
				[]string{fmt.Sprintf("Requesting HA migration for %s %d to node %s", kind, vmid, target)},
				func(c *Cluster, _ *[]string) string {
					if g := c.guest(vmid); g != nil && c.node(target).Online {
						g.Node = target
					}
					return ""
				})
			return t.UPID, nil
		}
		opts := migrateOpts{online: rc.flag("online"), restart: rc.flag("restart"), localDisks: rc.flag("with-local-disks")}
		source := g.Node
		t := rc.s.startTask(source, map[string]string{"qemu": "qmigrate", "lxc": "vzmigrate"}[typ], vmid, rc.user(), -1, nil,
			func(c *Cluster, log *[]string) string {
				g := c.guest(vmid)
				if g == nil || g.Node != source {
					return fmt.Sprintf("Configuration file '%s' does not exist", confPath(source, typ, vmid))
				}
				n := c.node(target)
				*log = append(*log, fmt.Sprintf("starting migration of %s %d to node '%s' (%s)", kind, vmid, target, n.IP))
				if why := migrateBlocker(c, g, n, opts); why != "" {
					*log = append(*log, "ERROR: migration aborted (duration 00:00:01): "+why)
					return "migration aborted"
				}
				if g.Type == "lxc" && g.Status == "running" { // restart mode
					*log = append(*log, fmt.Sprintf("shutdown CT %d", vmid), "start container on target node")
					g.Uptime = 1
				}
				g.Node = target
				*log = append(*log, "migration finished successfully (duration 00:00:01)")
				return ""
			})
		return t.UPID, nil
	}
}

// migrateOpts are the POST parameters the worker looks at.
type migrateOpts struct{ online, restart, localDisks bool }

// migrateBlocker is why the worker aborts, or "": what QemuMigrate /
// LXC::Migrate find in prepare and phase 1.
func migrateBlocker(c *Cluster, g *Guest, target *Node, o migrateOpts) string {
	running := g.Status == "running"
	switch {
	case g.Type == "lxc" && lockCheck(g) != "":
		return lockCheck(g)
	case g.Type == "lxc" && running && o.online:
		return "lxc live migration is currently not implemented"
	case !target.Online:
		return "Can't connect to destination address using public key"
	case g.Type == "qemu" && len(g.LocalResources) > 0:
		return "can't migrate VM which uses local devices: " + strings.Join(g.LocalResources, ", ")
	}
	if miss := unavailableStorages(c, g, target.Name); len(miss) > 0 {
		return fmt.Sprintf("storage '%s' is not available on node '%s'", miss[0], target.Name)
	}
	if g.Type == "qemu" && running && len(g.LocalDisks) > 0 && !o.localDisks {
		return "can't live migrate attached local disks without with-local-disks option"
	}
	return ""
}
