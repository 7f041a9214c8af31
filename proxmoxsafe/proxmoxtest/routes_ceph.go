package proxmoxtest

import (
	"fmt"
	"maps"
	"slices"
)

// CephModel is a cluster's Ceph state. A nil [Cluster.Ceph] models a
// cluster where Ceph is not installed.
type CephModel struct {
	// NotInitialized models Ceph packages installed but `pveceph init`
	// never run: 500 "pveceph configuration not initialized".
	NotInitialized bool
	// Health is HEALTH_OK, HEALTH_WARN or HEALTH_ERR ("" = HEALTH_OK).
	Health string
	// Checks are the active health checks by code, e.g. "OSD_NEARFULL".
	Checks map[string]CephCheck
	// Monitors names the monitors (usually node names); OutOfQuorum lists
	// those not in quorum.
	Monitors    []string
	OutOfQuorum []string
	// OSDs is the number of OSDs; Up and In how many are up / in.
	OSDs, OSDsUp, OSDsIn int
	// PGStates counts placement groups by state, e.g. "active+clean": 128.
	PGStates map[string]int
	// BytesTotal and BytesUsed are the raw capacity and usage.
	BytesTotal, BytesUsed uint64
	Pools                 int
}

// CephCheck is one Ceph health check.
type CephCheck struct {
	// Severity is HEALTH_WARN or HEALTH_ERR.
	Severity string
	// Summary is the one-line message, e.g. "3 nearfull osd(s)".
	Summary string
	// Details are the per-item messages.
	Details []string
	Muted   bool
}

// DemoCeph is a healthy-but-warning three-monitor Ceph, shaped after a real
// Reef cluster (see the pve8 recording in the project's reference data).
func DemoCeph(monitors ...string) *CephModel {
	return &CephModel{
		Health: "HEALTH_WARN",
		Checks: map[string]CephCheck{
			"OSD_NEARFULL": {Severity: "HEALTH_WARN", Summary: "1 nearfull osd(s)", Details: []string{"osd.3 is near full"}},
		},
		Monitors: monitors,
		OSDs:     6, OSDsUp: 6, OSDsIn: 6,
		PGStates:   map[string]int{"active+clean": 127, "active+clean+scrubbing": 1},
		BytesTotal: 6 << 40, BytesUsed: 4 << 40,
		Pools: 3,
	}
}

// handleCephStatus mirrors `ceph status --format json` as PVE relays it
// (mgr API2/Ceph.pm → PVE::Ceph::Tools), or the errors of a cluster without
// Ceph (check_ceph_inited).
func handleCephStatus(rc *reqCtx) (any, *apiError) {
	cm := rc.s.cluster.Ceph
	switch {
	case cm == nil:
		return nil, errf("binary not installed: /usr/bin/ceph-mon")
	case cm.NotInitialized:
		return nil, errf("pveceph configuration not initialized")
	}
	const fsid = "d11c6ea1-7ab2-41fa-99c5-b85f4d7ffd49"
	health := cm.Health
	if health == "" {
		health = "HEALTH_OK"
	}
	checks := map[string]any{}
	for code, ch := range cm.Checks {
		detail := make([]map[string]any, 0, len(ch.Details))
		for _, d := range ch.Details {
			detail = append(detail, map[string]any{"message": d})
		}
		checks[code] = map[string]any{
			"severity": ch.Severity,
			"summary":  map[string]any{"message": ch.Summary, "count": max(len(ch.Details), 1)},
			"detail":   detail,
			"muted":    ch.Muted,
		}
	}
	var quorum []int
	var quorumNames []string
	mons := make([]map[string]any, 0, len(cm.Monitors))
	for i, name := range cm.Monitors {
		ip := fmt.Sprintf("10.10.0.%d", i+1)
		if n := rc.s.cluster.node(name); n != nil && n.IP != "" {
			ip = n.IP
		}
		mons = append(mons, map[string]any{
			"rank": i, "name": name, "addr": ip + ":6789/0", "public_addr": ip + ":6789/0",
			"public_addrs": map[string]any{"addrvec": []map[string]any{
				{"type": "v2", "addr": ip + ":3300", "nonce": 0},
				{"type": "v1", "addr": ip + ":6789", "nonce": 0},
			}},
			"priority": 0, "weight": 0, "crush_location": "{}",
		})
		if !slices.Contains(cm.OutOfQuorum, name) {
			quorum = append(quorum, i)
			quorumNames = append(quorumNames, name)
		}
	}
	if quorum == nil {
		quorum, quorumNames = []int{}, []string{}
	}
	states := []map[string]any{}
	pgs := 0
	for _, st := range slices.Sorted(maps.Keys(cm.PGStates)) {
		states = append(states, map[string]any{"state_name": st, "count": cm.PGStates[st]})
		pgs += cm.PGStates[st]
	}
	active := ""
	if len(quorumNames) > 0 {
		active = quorumNames[0]
	}
	since := rc.s.started.Unix() - 86400
	return map[string]any{
		"fsid":           fsid,
		"health":         map[string]any{"status": health, "checks": checks, "mutes": []any{}},
		"election_epoch": 42,
		"quorum":         quorum,
		"quorum_names":   quorumNames,
		"quorum_age":     86400,
		"monmap": map[string]any{
			"epoch": 3, "fsid": fsid, "modified": "2025-10-01T09:00:00.000000Z", "created": "2025-01-01T09:00:00.000000Z",
			"min_mon_release": 19, "min_mon_release_name": "squid", "election_strategy": 1,
			"disallowed_leaders: ": "", "stretch_mode": false, "tiebreaker_mon": "", "removed_ranks: ": "",
			"features": map[string]any{"persistent": []string{"kraken", "luminous", "mimic", "osdmap-prune", "nautilus",
				"octopus", "pacific", "elector-pinging", "quincy", "reef", "squid"}, "optional": []string{}},
			"mons": mons, "quorum": quorum,
		},
		"osdmap": map[string]any{
			"epoch": 1200, "num_osds": cm.OSDs, "num_up_osds": cm.OSDsUp, "osd_up_since": since,
			"num_in_osds": cm.OSDsIn, "osd_in_since": since, "num_remapped_pgs": 0,
		},
		"pgmap": map[string]any{
			"pgs_by_state": states, "num_pgs": pgs, "num_pools": cm.Pools, "num_objects": cm.BytesUsed / (4 << 20) / 3,
			"data_bytes": cm.BytesUsed / 3, "bytes_used": cm.BytesUsed, "bytes_avail": cm.BytesTotal - min(cm.BytesUsed, cm.BytesTotal),
			"bytes_total": cm.BytesTotal, "read_bytes_sec": 50660, "write_bytes_sec": 2697932, "read_op_per_sec": 3, "write_op_per_sec": 211,
		},
		"fsmap": fsmap(active, len(quorumNames)),
		"mgrmap": map[string]any{
			"available": active != "", "active_name": active, "active_gid": 4242, "epoch": 77,
			"active_addr": "10.10.0.1:6801/1234", "active_change": "2025-10-01T09:00:00.000000+0000",
			"active_addrs":        map[string]any{"addrvec": []map[string]any{{"type": "v2", "addr": "10.10.0.1:6800", "nonce": 1234}}},
			"active_mgr_features": 4540138322906710015, "last_failure_osd_epoch": 0,
			"modules": []string{"iostat", "nfs", "restful"}, "services": map[string]any{},
			"standbys": []any{}, "available_modules": []any{}, "active_clients": []any{},
			"always_on_modules": map[string]any{"squid": []string{"balancer", "crash", "devicehealth", "orchestrator", "pg_autoscaler", "progress", "status", "telemetry", "volumes"}},
		},
		"servicemap":      map[string]any{"epoch": 9, "modified": "2025-10-01T09:00:00.000000+0000", "services": map[string]any{}},
		"progress_events": map[string]any{},
	}, nil
}

// fsmap models one CephFS with an active MDS on the first monitor in
// quorum and the others standing by, like the recorded cluster.
func fsmap(active string, mons int) map[string]any {
	if active == "" {
		return map[string]any{"epoch": 1, "id": 1, "up": 0, "in": 0, "max": 1, "by_rank": []any{}, "up:standby": 0}
	}
	return map[string]any{"epoch": 1, "id": 1, "up": 1, "in": 1, "max": 1, "up:standby": max(mons-1, 0),
		"by_rank": []map[string]any{{"filesystem_id": 1, "rank": 0, "name": active, "status": "up:active", "gid": 4711}}}
}
