package proxmoxtest

import "time"

// defaultAgentTimeout is qemu-server's qga_check_running: a guest-ping
// with a 3 s timeout (QemuServer.pm).
const defaultAgentTimeout = 3 * time.Second

// agentRoutes are the guest-agent endpoints the fake serves: only ping,
// which a responder uses to tell a hung guest from a busy one. The other
// agent commands (exec, file-read, …) are code execution or data access
// and are never modelled (docs/SECURITY.md).
func agentRoutes() []*route {
	// PVE 9.1: VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted; PVE 7.4
	// and 8.4: VM.Monitor (schema-subset-pve*.json). The handler checks
	// the one that fits the cluster's version.
	return []*route{
		{method: "POST", path: "/nodes/{node}/qemu/{vmid}/agent/ping", params: guestParams(), proxy: true, handle: handleAgentPing},
	}
}

// agentPerm is the permission check of agent/ping for the cluster's version.
func agentPerm(c *Cluster) *permSpec {
	if c.versionAtLeast(9, 0, 0) {
		return &permSpec{path: "/vms/{vmid}", privs: []string{"VM.GuestAgent.Audit", "VM.GuestAgent.Unrestricted"}, any: true}
	}
	return &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Monitor"}}
}

// handleAgentPing is POST .../agent/ping (API2/Qemu/Agent.pm): load_config,
// then assert_agent_available (configured, VM running, agent answering a
// 3 s guest-ping), then guest-ping itself, answered {"result":{}}.
func handleAgentPing(rc *reqCtx) (any, *apiError) {
	if aerr := agentPerm(rc.s.cluster).check(rc); aerr != nil {
		return nil, aerr
	}
	g, aerr := loadGuest(rc, "qemu")
	if aerr != nil {
		return nil, aerr
	}
	switch {
	case !g.AgentEnabled:
		return nil, errf("No QEMU guest agent configured")
	case g.Status != "running":
		return nil, errf("VM %d is not running", g.VMID)
	case g.AgentHung || g.Paused:
		// A paused VM's agent cannot answer either.
		wait := rc.s.AgentTimeout
		if wait <= 0 {
			wait = defaultAgentTimeout
		}
		return delayedAnswer{wait: wait, err: errf("QEMU guest agent is not running")}, nil
	}
	return map[string]any{"result": map[string]any{}}, nil
}
