package proxmoxsafe

import (
	"net/url"
	"strings"
)

// A gateway write that selects guests by a set instead of naming them is
// refused outright. The protected-guest check reads the guests a request
// names (checkGatewayProtected); a set names none: vzdump's all=1 (every
// guest of the node), all=1 with exclude=…, pool=… (every guest of the
// pool), a backup job that does the same at every run, an HA group or
// rule whose every guest the HA manager moves when it changes. Resolving
// the set from fresh state instead was weighed and not chosen: the set is
// Proxmox's to resolve when the request runs, not ours when it is
// approved (a guest created, migrated onto the node or added to the pool
// in between is selected too), and a job resolves it again at each run,
// months later; no read now can show that no run will select a protected
// guest. Refusing is the reason the deny list gives for
// /cluster/bulk-action/** and the node-wide startall, stopall,
// suspendall and migrateall, applied to every route that selects a set.
// Guests named one by one (vmid=100,101, vms=…, resources=…) are checked
// as before.

// setParams are the parameters that select guests by a set, with why:
// vzdump and backup jobs (pve-manager's VZDump.pm, verify_vzdump_parameters:
// exclude implies all=1).
var setParams = []struct{ name, why string }{
	{"all", "selects every guest (of the node for a backup run, of the cluster for a backup job)"},
	{"exclude", "selects every guest but those listed (it implies all=1)"},
	{"pool", "selects every guest of the pool (a backup run or job), or puts a new guest into it"},
}

// setRoutes are requests that act on a set of guests the request does not
// list, whatever their parameters.
var setRoutes = []struct {
	method string
	segs   []string // "*" is any one segment
	param  string   // when set, only with this parameter
	why    string
}{
	{"POST", []string{"nodes", "*", "vzdump"}, "stop", "stops every backup running on the node, whichever guests they back up"},
	{"PUT", []string{"cluster", "backup", "*"}, "", "changes a backup job, which acts at every run on the guests its selection holds then (all, a pool, a list), none of which the request names"},
	{"PUT", []string{"cluster", "ha", "groups", "*"}, "", "changes an HA group, whose every guest the HA manager moves to fit it, none of which the request names"},
	{"DELETE", []string{"cluster", "ha", "groups", "*"}, "", "removes an HA group, whose every guest the HA manager then places anew, none of which the request names"},
	{"PUT", []string{"cluster", "ha", "rules", "*"}, "", "changes an HA rule, whose every guest the HA manager moves to fit it, none of which the request names"},
	{"DELETE", []string{"cluster", "ha", "rules", "*"}, "", "removes an HA rule, whose every guest the HA manager then places anew, none of which the request names"},
}

// falseBool reports whether v is one of Proxmox's false booleans.
func falseBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// checkGatewaySets refuses a write that selects guests by a set (see the
// file comment). No request is sent.
func checkGatewaySets(method string, segs []string, vals url.Values) error {
	const advice = "a write through the gateway must name each guest it acts on (vmid=100,101 is checked guest by guest), since protected guests are only refused by name; nothing was sent"
	for _, p := range setParams {
		v, ok := vals[p.name]
		if !ok || p.name == "all" && len(v) == 1 && falseBool(v[0]) {
			continue
		}
		return refuse(ErrNotAllowed, "parameter %s %s: %s", p.name, p.why, advice)
	}
	for _, sr := range setRoutes {
		if sr.method != method || len(sr.segs) != len(segs) || sr.param != "" && (!vals.Has(sr.param) || falseBool(vals.Get(sr.param))) {
			continue
		}
		ok := true
		for i, s := range sr.segs {
			if s != "*" && !strings.EqualFold(s, segs[i]) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		what := method + " " + truncate(gatewayCanonical(segs), 120)
		if sr.param != "" {
			what += " with " + sr.param
		}
		return refuse(ErrNotAllowed, "%s %s: %s", what, sr.why, advice)
	}
	return nil
}
