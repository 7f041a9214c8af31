package main

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// checkPolicy reports what the operator policy means in practice, before
// anything is sent (issue 8: doctor said "ok" and the next command failed,
// or a setup offered no mutation without saying why).
func checkPolicy(r *report, cfg *config, pol proxmoxsafe.Policy) {
	switch {
	case pol.ReadOnly:
		r.info("policy: read-only: no mutation tool is offered and only GET requests reach Proxmox")
	case len(pol.Classes) == 0:
		r.info("policy: profile %s enables no mutation class: only read tools are offered", cfg.Profile)
	case len(pol.AllowedNodes) == 0:
		r.warn("policy: profile %s enables mutation classes %s, but PVE_ALLOWED_NODES is empty: every mutation needs an allowed node, so no mutation tool is offered and node-targeted reads are refused",
			cfg.Profile, classNames(pol.Classes))
		r.detail("set PVE_ALLOWED_NODES=pve1,pve2 (the nodes this server may act on), or PROXMOX_SAFE_PROFILE=%s to say that reads are all you want", proxmoxsafe.ProfileReadOnly)
	default:
		r.ok("policy: mutation classes %s on nodes %s, each action needing its approval", classNames(pol.Classes), describeNodes(pol.AllowedNodes))
	}
	// doctor needs no audit log, but serve does: say so here rather than
	// let the next command fail after "everything checked is fine". (The
	// demo's serve makes its own temporary audit log.)
	if cfg.Demo {
		return
	}
	serve := *cfg
	serve.Command = cmdServe
	if err := checkConfigRest(&serve); err != nil {
		r.fail("configuration: `serve` (and `call`) would refuse to start: %v", err)
	}
}
