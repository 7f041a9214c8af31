package proxmoxtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// destroyRoutes are DELETE /nodes/{node}/qemu|lxc/{vmid} (PVE 9.1
// schema: qemu purge, skiplock, destroy-unreferenced-disks; lxc purge,
// force, destroy-unreferenced-disks; VM.Allocate on /vms/{vmid}).
func destroyRoutes() []*route {
	perm := &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Allocate"}}
	return []*route{
		{method: "DELETE", path: "/nodes/{node}/qemu/{vmid}", perm: perm, proxy: true,
			params: guestParams(pBool("purge"), pBool("skiplock"), pBool("destroy-unreferenced-disks")),
			handle: handleDestroyQemu},
		{method: "DELETE", path: "/nodes/{node}/lxc/{vmid}", perm: perm, proxy: true,
			params: guestParams(pBool("purge"), pBool("force"), pBool("destroy-unreferenced-disks")),
			handle: handleDestroyLXC},
	}
}

// handleDestroyQemu is qemu-server's destroy_vm (API2/Qemu.pm): the
// synchronous early checks (protection, HA without purge, running), then
// a qmdestroy worker that repeats them under the config lock, checks the
// lock (a hibernated VM, locked "suspended", may be destroyed) and a
// template's base volumes (QemuServer destroy_vm), and removes the VM.
func handleDestroyQemu(rc *reqCtx) (any, *apiError) {
	if rc.flag("skiplock") { // an API token is never root@pam
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	g, aerr := loadGuest(rc, "qemu")
	if aerr != nil {
		return nil, aerr
	}
	purge := rc.flag("purge")
	early := func(g *Guest) string {
		switch {
		case g.Config["protection"] == "1":
			return fmt.Sprintf("can't remove VM %d - protection mode enabled", g.VMID)
		case g.HAManaged && !purge:
			return fmt.Sprintf("unable to remove VM %d - used in HA resources and purge parameter not set.", g.VMID)
		case g.Status == "running":
			return fmt.Sprintf("VM %d is running - destroy failed", g.VMID)
		}
		return ""
	}
	if msg := early(g); msg != "" {
		return nil, errf("%s", msg)
	}
	return rc.s.destroyTask(rc, g, "qmdestroy", purge, func(g *Guest, _ *[]string) string {
		if msg := early(g); msg != "" {
			return msg
		}
		if msg := lockCheck(g, "suspended"); msg != "" {
			return msg
		}
		if vol := rc.s.cluster.baseInUse(g); vol != "" {
			return fmt.Sprintf("base volume '%s' is still in use by linked cloned", vol)
		}
		return ""
	})
}

// handleDestroyLXC is pve-container's destroy_vm (API2/LXC.pm): the
// early checks (protection, lock, HA without purge) and the running check
// answer synchronously; the vzdestroy worker repeats them, stops a
// running container first with force (a warning), and fails on a
// template's base volume still used by a linked clone (Storage
// vdisk_free).
func handleDestroyLXC(rc *reqCtx) (any, *apiError) {
	g, aerr := loadGuest(rc, "lxc")
	if aerr != nil {
		return nil, aerr
	}
	purge, force := rc.flag("purge"), rc.flag("force")
	early := func(g *Guest) string {
		switch {
		case g.Config["protection"] == "1":
			return fmt.Sprintf("can't remove CT %d - protection mode enabled", g.VMID)
		case g.Lock != "":
			return lockCheck(g)
		case g.HAManaged && !purge:
			return fmt.Sprintf("unable to remove CT %d - used in HA resources and purge parameter not set.", g.VMID)
		}
		return ""
	}
	running := func(g *Guest) string { return fmt.Sprintf("unable to destroy CT %d - container is running", g.VMID) }
	if msg := early(g); msg != "" {
		return nil, errf("%s", msg)
	}
	if g.Status == "running" && !force {
		return nil, errf("%s", running(g))
	}
	return rc.s.destroyTask(rc, g, "vzdestroy", purge, func(g *Guest, log *[]string) string {
		if msg := early(g); msg != "" {
			return msg
		}
		exit := ""
		if g.Status == "running" {
			if !force {
				return running(g)
			}
			*log = append(*log, fmt.Sprintf("WARN: forced to stop CT %d before destroying!", g.VMID))
			applyPower(g, false)
			exit = "WARNINGS: 1"
		}
		if vol := rc.s.cluster.baseInUse(g); vol != "" {
			_, volname, _ := strings.Cut(vol, ":")
			return fmt.Sprintf("base volume '%s' is still in use by linked clones", volname)
		}
		return exit
	})
}

// destroyTask starts a destroy worker: check returns the task's error
// (or a WARNINGS exit), and when it returns none the guest is removed
// from the cluster, with its HA resource when purge is set (without
// purge an HA-managed guest never gets this far).
func (s *Server) destroyTask(rc *reqCtx, g *Guest, typ string, purge bool, check func(g *Guest, log *[]string) string) (any, *apiError) {
	vmid, node, gtype := g.VMID, g.Node, g.Type
	kind := map[string]string{"qemu": "VM", "lxc": "CT"}[gtype]
	t := s.startTask(node, typ, vmid, rc.user(), -1, nil, func(c *Cluster, log *[]string) string {
		g := c.guest(vmid)
		if g == nil || g.Node != node || g.Type != gtype {
			return fmt.Sprintf("Configuration file '%s' does not exist", confPath(node, gtype, vmid))
		}
		exit := check(g, log)
		if exit != "" && !warningsRE.MatchString(exit) {
			return exit
		}
		if purge {
			*log = append(*log, fmt.Sprintf("purging %s %d from related configurations..", kind, vmid))
			if g.HAManaged {
				*log = append(*log, fmt.Sprintf("NOTE: removed %s %d from HA resource configuration.", kind, vmid))
			}
		}
		c.Guests = slices.DeleteFunc(c.Guests, func(x *Guest) bool { return x.VMID == vmid })
		delete(s.haPending, vmid)
		return exit
	})
	return t.UPID, nil
}

// baseInUse returns the base volume of template g that another guest's
// configuration still uses as a linked clone ("local-lvm:base-100-disk-0"
// from "local-lvm:base-100-disk-0/vm-101-disk-0"), or "".
func (c *Cluster) baseInUse(g *Guest) string {
	if !g.Template {
		return ""
	}
	marker := "base-" + strconv.Itoa(g.VMID) + "-disk-"
	for _, o := range c.Guests {
		if o.VMID == g.VMID {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(o.Config)) {
			vol, _, _ := strings.Cut(o.Config[k], ",")
			if base, _, ok := strings.Cut(vol, "/"); ok && strings.Contains(base, marker) {
				return base
			}
		}
	}
	return ""
}
