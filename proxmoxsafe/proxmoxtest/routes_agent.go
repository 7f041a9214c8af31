package proxmoxtest

import "time"

// defaultAgentTimeout is qemu-server's qga_check_running: a guest-ping
// with a 3 s timeout (QemuServer.pm).
const defaultAgentTimeout = 3 * time.Second

// agentRoutes are the guest-agent endpoints the fake serves: ping, which
// a responder uses to tell a hung guest from a busy one, and the reads of
// what the guest reports about itself (interfaces, OS, host name, file
// systems, clock). The other agent commands (exec, file-read, …) are code
// execution or data access and are never modelled (docs/SECURITY.md).
func agentRoutes() []*route {
	// PVE 9.1: VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted; PVE 7.4
	// and 8.4: VM.Monitor (schema-subset-pve*.json). The handlers check
	// the one that fits the cluster's version.
	base := "/nodes/{node}/qemu/{vmid}/agent/"
	return []*route{
		{method: "POST", path: base + "ping", params: guestParams(), proxy: true, handle: handleAgentPing},
		{method: "GET", path: base + "network-get-interfaces", params: guestParams(), proxy: true, handle: agentRead(agentNetworkInterfaces)},
		{method: "GET", path: base + "get-osinfo", params: guestParams(), proxy: true, handle: agentRead(agentOSInfo)},
		{method: "GET", path: base + "get-host-name", params: guestParams(), proxy: true, handle: agentRead(agentHostName)},
		{method: "GET", path: base + "get-fsinfo", params: guestParams(), proxy: true, handle: agentRead(agentFSInfo)},
		{method: "GET", path: base + "get-time", params: guestParams(), proxy: true, handle: agentRead(agentTime)},
	}
}

// agentPerm is the permission check of the agent endpoints for the
// cluster's version.
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
	_, delayed, aerr := agentReady(rc)
	if aerr != nil || delayed != nil {
		return delayed, aerr
	}
	return map[string]any{"result": map[string]any{}}, nil
}
