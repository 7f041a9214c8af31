package proxmoxtest

import "strings"

// lxcInterfacesRoutes is GET /nodes/{node}/lxc/{vmid}/interfaces
// (pve-container API2/LXC.pm "ip"): VM.Audit, forwarded to the node, new
// in pve-container 5.0.6 (PVE 8.0; a 7.4 cluster answers 501).
func lxcInterfacesRoutes() []*route {
	return []*route{
		{method: "GET", path: "/nodes/{node}/lxc/{vmid}/interfaces", params: guestParams(), perm: vmAudit, proxy: true,
			handle: handleLXCInterfaces, since: [3]int{8, 0, 0}},
	}
}

// handleLXCInterfaces runs `ip --json a` in the container's network
// namespace (LXC.pm get_interfaces): a stopped container answers
// {"data": null}, not an error. Each interface has name and hwaddr and the
// legacy inet/inet6, the last address of that family as addr/prefix
// (pve8 lxc-interfaces.json); from pve-container 5.2.6 (the 8.4 schema
// documents it) also hardware-address and ip-addresses with every
// address, typed inet/inet6 rather than the agent's ipv4/ipv6.
func handleLXCInterfaces(rc *reqCtx) (any, *apiError) {
	g, aerr := loadGuest(rc, "lxc")
	if aerr != nil {
		return nil, aerr
	}
	if g.Status != "running" {
		return nil, nil
	}
	full := rc.s.cluster.versionAtLeast(8, 4, 0)
	out := []map[string]any{}
	for _, nic := range guestInterfaces(g) {
		e := map[string]any{"name": nic.Name, "hwaddr": nic.MAC}
		addrs := []map[string]any{}
		for _, a := range nic.Addrs {
			ip, prefix := splitCIDR(a)
			typ, legacy := "inet", "inet"
			if strings.Contains(ip, ":") {
				typ, legacy = "inet6", "inet6"
			}
			e[legacy] = a
			addrs = append(addrs, map[string]any{"ip-address": ip, "ip-address-type": typ, "prefix": prefix})
		}
		if full {
			e["hardware-address"] = nic.MAC
			e["ip-addresses"] = addrs
		}
		out = append(out, e)
	}
	return out, nil
}
