package proxmoxtest

import (
	"fmt"
	"net/http"
)

// handlePower serves POST .../status/{action}. Synchronous checks are the
// ones qemu-server / pve-container make before forking the worker (500 or
// 400); everything else, lock checks included, fails inside the task, as in
// the real code (QemuServer vm_start/_do_vm_stop, LXC Status.pm workers).
func handlePower(typ, action string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		// Root-only options; an API token is never root@pam.
		for _, p := range []string{"skiplock", "keepActive"} {
			if rc.flag(p) {
				return nil, paramErr(map[string]string{p: "Only root may use this option."})
			}
		}
		if typ == "lxc" {
			return powerLXC(rc, g, action)
		}
		return powerQemu(rc, g, action)
	}
}

// lockCheck is check_lock: the error for a locked guest unless its lock is
// one the action tolerates.
func lockCheck(g *Guest, allowed ...string) string {
	if g.Lock == "" {
		return ""
	}
	for _, a := range allowed {
		if g.Lock == a {
			return ""
		}
	}
	if g.Type == "lxc" {
		return fmt.Sprintf("CT is locked (%s)", g.Lock)
	}
	return fmt.Sprintf("VM is locked (%s)", g.Lock)
}

// guestTask starts a normal worker task whose body fn runs when it stops.
func (s *Server) guestTask(rc *reqCtx, g *Guest, typ string, fn func(g *Guest) string) (any, *apiError) {
	vmid, node, gtype := g.VMID, g.Node, g.Type
	t := s.startTask(node, typ, vmid, rc.user(), -1, nil, func(c *Cluster, _ *[]string) string {
		g := c.guest(vmid)
		if g == nil || g.Node != node {
			return fmt.Sprintf("Configuration file '%s' does not exist", confPath(node, gtype, vmid))
		}
		return fn(g)
	})
	return t.UPID, nil
}

// haTask is an hastart/hastop task: it stops OK at once, and the guest
// follows after HADelayPolls status reads.
func (s *Server) haTask(rc *reqCtx, g *Guest, start bool) (any, *apiError) {
	kind, typ := "VM", "hastop"
	if g.Type == "lxc" {
		kind = "CT"
	}
	verb := "stop"
	if start {
		typ, verb = "hastart", "start"
	}
	s.requestHA(g, start)
	t := s.startTask(g.Node, typ, g.VMID, rc.user(), 0, []string{fmt.Sprintf("Requesting HA %s for %s %d", verb, kind, g.VMID)},
		func(*Cluster, *[]string) string { return "" })
	return t.UPID, nil
}

func powerQemu(rc *reqCtx, g *Guest, action string) (any, *apiError) {
	s := rc.s
	running := g.Status == "running"
	switch action {
	case "start":
		if g.HAManaged {
			return s.haTask(rc, g, true)
		}
		return s.guestTask(rc, g, "qmstart", func(g *Guest) string {
			if g.Template {
				return "you can't start a vm if it's a template"
			}
			if msg := lockCheck(g, "suspended"); msg != "" {
				return msg
			}
			if g.Status == "running" {
				return fmt.Sprintf("VM %d already running", g.VMID)
			}
			if g.Lock == "suspended" {
				g.Lock = "" // resumed from hibernation
			}
			applyPower(g, true)
			return ""
		})
	case "stop", "shutdown":
		if g.Paused && action == "shutdown" && !rc.flag("forceStop") {
			return nil, errf("VM is paused - cannot shutdown")
		}
		if g.HAManaged {
			if rc.flag("overrule-shutdown") {
				return nil, paramErr(map[string]string{"overrule-shutdown": "Not applicable for HA resources."})
			}
			return s.haTask(rc, g, false)
		}
		return s.guestTask(rc, g, "qm"+action, func(g *Guest) string {
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			applyPower(g, false) // stopping a stopped VM is a successful no-op
			return ""
		})
	case "reboot", "reset":
		if action == "reboot" && g.Paused {
			return nil, errf("VM is paused - cannot shutdown")
		}
		if !running {
			return nil, errf("VM %d not running", g.VMID)
		}
		return s.guestTask(rc, g, "qm"+action, func(g *Guest) string {
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			if g.Status == "running" {
				g.Uptime = 1
				g.Paused = false
			}
			return ""
		})
	case "suspend":
		if !running {
			return nil, errf("VM %d not running", g.VMID)
		}
		todisk := rc.flag("todisk")
		if todisk && g.HAManaged {
			return nil, errf("Cannot suspend HA managed VM to disk")
		}
		typ := "qmpause"
		if todisk {
			typ = "qmsuspend"
		}
		return s.guestTask(rc, g, typ, func(g *Guest) string {
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			if todisk {
				applyPower(g, false)
				g.Lock = "suspended"
				return ""
			}
			g.Paused = g.Status == "running"
			return ""
		})
	case "resume":
		if !running && g.Lock != "suspended" {
			return nil, errf("VM %d not running", g.VMID)
		}
		return s.guestTask(rc, g, "qmresume", func(g *Guest) string {
			if msg := lockCheck(g, "suspended", "backup"); msg != "" {
				return msg
			}
			if g.Lock == "suspended" {
				g.Lock = ""
				applyPower(g, true)
			}
			g.Paused = false
			return ""
		})
	}
	return nil, &apiError{status: http.StatusNotImplemented, message: "unknown action " + action}
}

func powerLXC(rc *reqCtx, g *Guest, action string) (any, *apiError) {
	s := rc.s
	running := g.Status == "running"
	switch action {
	case "start", "resume":
		if running {
			return nil, errf("CT %d already running", g.VMID)
		}
		if action == "start" && g.HAManaged {
			return s.haTask(rc, g, true)
		}
		return s.guestTask(rc, g, "vz"+action, func(g *Guest) string {
			if g.Template {
				return "you can't start a CT if it's a template"
			}
			if msg := lockCheck(g, "mounted"); msg != "" {
				return msg
			}
			applyPower(g, true)
			return ""
		})
	case "stop", "shutdown", "suspend":
		if !running {
			return nil, errf("CT %d not running", g.VMID)
		}
		if g.HAManaged && action != "suspend" {
			if rc.flag("overrule-shutdown") {
				return nil, paramErr(map[string]string{"overrule-shutdown": "Not applicable for HA resources."})
			}
			return s.haTask(rc, g, false)
		}
		return s.guestTask(rc, g, "vz"+action, func(g *Guest) string {
			allowed := []string{}
			if action == "stop" {
				allowed = append(allowed, "mounted")
			}
			if msg := lockCheck(g, allowed...); msg != "" {
				return msg
			}
			if action != "suspend" { // CRIU checkpoint: the fake keeps it running
				applyPower(g, false)
			}
			return ""
		})
	case "reboot":
		if !running {
			return nil, errf("VM %d not running", g.VMID) // sic: pve-container says VM
		}
		return s.guestTask(rc, g, "vzreboot", func(g *Guest) string {
			if g.Status == "running" {
				g.Uptime = 1
			}
			return ""
		})
	}
	return nil, &apiError{status: http.StatusNotImplemented, message: "unknown action " + action}
}
