package proxmoxtest

import (
	"slices"
	"strconv"
	"time"
)

// haSID is the HA resource id of a guest: vm:<vmid> or ct:<vmid>.
func haSID(g *Guest) string {
	if g.Type == "lxc" {
		return "ct:" + strconv.Itoa(g.VMID)
	}
	return "vm:" + strconv.Itoa(g.VMID)
}

// haGuests are the HA-managed guests ordered by sid, as the status lists them.
func (c *Cluster) haGuests() []*Guest {
	var out []*Guest
	for _, g := range c.Guests {
		if g.HAManaged {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b *Guest) int {
		if sa, sb := haSID(a), haSID(b); sa != sb {
			if sa < sb {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// haRequestState is the resource's requested state (resources.cfg "state").
func haRequestState(g *Guest) string {
	if g.HAState == "" {
		return "started"
	}
	return g.HAState
}

// haCRMState is the CRM's view of the service: the state a test set
// (Guest.HACRMState), "fence" when its node is gone, else it follows the
// request: "started" also while the LRM has yet to start the guest (the
// manager has no separate starting state), "request_stop" until a stop
// has happened (pve-ha-manager Manager.pm).
func (c *Cluster) haCRMState(g *Guest) string {
	if g.HACRMState != "" {
		return g.HACRMState
	}
	if n := c.node(g.Node); n == nil || !n.Online {
		return "fence"
	}
	req := haRequestState(g)
	if req == "stopped" && g.Status == "running" {
		return "request_stop"
	}
	return req
}

// handleHAResources is GET /cluster/ha/resources (pve-ha-manager
// API2/HA/Resources.pm index): the resources.cfg entries. PVE 9 replaced
// groups by rules and added failback.
func handleHAResources(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	out := []map[string]any{}
	for _, g := range c.haGuests() {
		typ := map[string]string{"qemu": "vm", "lxc": "ct"}[g.Type]
		if t := rc.params["type"]; t != "" && t != typ {
			continue
		}
		e := map[string]any{
			"sid": haSID(g), "type": typ, "state": haRequestState(g),
			"max_restart": 1, "max_relocate": 1, "digest": "8b3e4f0c2d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
		}
		if c.versionAtLeast(9, 0, 0) {
			e["failback"] = 1
		}
		out = append(out, e)
	}
	return out, nil
}

// handleHAStatus is GET /cluster/ha/status/current (pve-ha-manager
// API2/HA/Status.pm): quorum, then the master and one lrm entry per node
// once HA is in use, then one entry per service.
func handleHAStatus(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	online := 0
	for _, n := range c.Nodes {
		online += b2i(n.Online)
	}
	quorate := online*2 > len(c.Nodes)
	local := ""
	if len(c.Nodes) > 0 {
		local = c.Nodes[0].Name
	}
	quorum := map[string]any{"id": "quorum", "type": "quorum", "node": local, "status": "OK", "quorate": b2i(quorate)}
	if !quorate {
		quorum["status"] = "No quorum on node '" + local + "'!"
	}
	out := []map[string]any{quorum}
	guests := c.haGuests()
	if len(guests) == 0 {
		return out, nil // HA never used: no manager status yet
	}
	now := time.Now().Unix()
	stamp := func(ts int64) string { return time.Unix(ts, 0).Local().Format(time.ANSIC) }
	master := ""
	for _, n := range c.Nodes {
		if n.Online {
			master = n.Name
			break
		}
	}
	if master != "" {
		out = append(out, map[string]any{"id": "master", "type": "master", "node": master,
			"status": master + " (active, " + stamp(now) + ")", "timestamp": now})
	}
	nodes := slices.Clone(c.Nodes)
	slices.SortFunc(nodes, func(a, b *Node) int {
		if a.Name < b.Name {
			return -1
		}
		return b2i(a.Name > b.Name)
	})
	for _, n := range nodes {
		ts, state := now, "idle"
		if !n.Online {
			ts, state = now-3600, "old timestamp - dead?"
		} else {
			for _, g := range guests {
				if g.Node == n.Name {
					state = "active"
				}
			}
		}
		out = append(out, map[string]any{"id": "lrm:" + n.Name, "type": "lrm", "node": n.Name,
			"status": n.Name + " (" + state + ", " + stamp(ts) + ")", "timestamp": ts})
	}
	for _, g := range guests {
		sid := haSID(g)
		crm := c.haCRMState(g)
		e := map[string]any{
			"id": "service:" + sid, "type": "service", "sid": sid, "node": g.Node,
			"crm_state": crm, "state": crm, "status": sid + " (" + g.Node + ", " + crm + ")",
			"request_state": haRequestState(g), "max_restart": 1, "max_relocate": 1,
		}
		if c.versionAtLeast(9, 0, 0) {
			e["failback"] = 1
		}
		out = append(out, e)
	}
	return out, nil
}
