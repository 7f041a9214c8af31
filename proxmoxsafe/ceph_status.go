package proxmoxsafe

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpCephStatus is the name of [Client.CephStatus].
const OpCephStatus Operation = "CephStatus"

// cephStatusOp declares [Client.CephStatus].
var cephStatusOp = operation{info: OperationInfo{
	Name:   OpCephStatus,
	Method: "GET",
	Route:  "/cluster/ceph/status",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit",
			Note: "Datastore.Audit on / also suffices"},
	},
}}

// Bounds on the Ceph summary: a sick cluster can report many checks, each
// with a detail line per OSD or PG.
const (
	maxCephChecks    = 50
	maxCephDetails   = 5
	maxCephPGStates  = 50
	maxCephMonitors  = 32
	maxCephCheckText = 256
)

// CephStatusResult summarizes the cluster's Ceph. When Ceph is not
// installed (or not initialized) Installed is false, Message says so and
// every other field is empty: that is an answer, not an error.
type CephStatusResult struct {
	Installed bool `json:"installed"`
	// Message explains a missing Ceph in plain words.
	Message string `json:"message,omitempty"`
	// Health is HEALTH_OK, HEALTH_WARN or HEALTH_ERR.
	Health string `json:"health,omitempty"`
	// Checks are the active health checks, errors first, at most 50.
	Checks []CephHealthCheck `json:"checks"`
	// ChecksTotal counts every check, including those beyond the cap.
	ChecksTotal int          `json:"checks_total"`
	Monitors    CephMonitors `json:"monitors"`
	OSDs        CephOSDs     `json:"osds"`
	PGs         CephPGs      `json:"pgs"`
	// Usage is the raw capacity in bytes.
	Usage CephUsage `json:"usage"`
}

// CephHealthCheck is one Ceph health check, e.g. OSD_NEARFULL.
type CephHealthCheck struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	// Count is how many items the check is about (OSDs, pools, PGs…).
	Count int `json:"count"`
	// Details are the first few per-item messages.
	Details []string `json:"details"`
	Muted   bool     `json:"muted"`
}

// CephMonitors is the monitor quorum.
type CephMonitors struct {
	Count       int      `json:"count"`
	InQuorum    []string `json:"in_quorum"`
	OutOfQuorum []string `json:"out_of_quorum"`
}

// CephOSDs counts object storage daemons.
type CephOSDs struct {
	Total int `json:"total"`
	Up    int `json:"up"`
	In    int `json:"in"`
}

// CephPGs counts placement groups by state ("active+clean", …).
type CephPGs struct {
	Total  int           `json:"total"`
	States []CephPGState `json:"states"`
}

// CephPGState is a number of placement groups in one state.
type CephPGState struct {
	State string `json:"state"`
	Count int    `json:"count"`
}

// CephUsage is raw Ceph capacity in bytes.
type CephUsage struct {
	Used  uint64 `json:"used"`
	Avail uint64 `json:"avail"`
	Total uint64 `json:"total"`
}

type rawCephStatus struct {
	Health struct {
		Status pve.String `json:"status"`
		Checks map[string]struct {
			Severity pve.String `json:"severity"`
			Summary  struct {
				Message pve.String `json:"message"`
				Count   pve.Int    `json:"count"`
			} `json:"summary"`
			Detail []struct {
				Message pve.String `json:"message"`
			} `json:"detail"`
			Muted pve.Bool `json:"muted"`
		} `json:"checks"`
	} `json:"health"`
	QuorumNames []pve.String `json:"quorum_names"`
	MonMap      struct {
		Mons []struct {
			Name pve.String `json:"name"`
		} `json:"mons"`
	} `json:"monmap"`
	OSDMap struct {
		NumOSDs   pve.Int `json:"num_osds"`
		NumUpOSDs pve.Int `json:"num_up_osds"`
		NumInOSDs pve.Int `json:"num_in_osds"`
	} `json:"osdmap"`
	PGMap struct {
		NumPGs     pve.Int `json:"num_pgs"`
		PGsByState []struct {
			StateName pve.String `json:"state_name"`
			Count     pve.Int    `json:"count"`
		} `json:"pgs_by_state"`
		BytesUsed  pve.Int `json:"bytes_used"`
		BytesAvail pve.Int `json:"bytes_avail"`
		BytesTotal pve.Int `json:"bytes_total"`
	} `json:"pgmap"`
}

// CephStatus reads GET /cluster/ceph/status and summarizes health and its
// checks, monitors and quorum, OSDs up/in, placement groups by state and
// raw usage. It is a cluster-wide read, not limited by the node allowlist.
//
// On a cluster without Ceph, Proxmox answers 500 "binary not installed:
// /usr/bin/ceph-mon" (or "pveceph configuration not initialized"); that
// becomes a result with Installed false, not an error.
func (c *Client) CephStatus(ctx context.Context) (*CephStatusResult, error) {
	start := time.Now()
	var raw rawCephStatus
	if err := c.get(ctx, "/cluster/ceph/status", nil, &raw); err != nil {
		if msg, ok := cephAbsent(err); ok {
			c.logged(ctx, "CephStatus", start, nil)
			return &CephStatusResult{Message: msg, Checks: []CephHealthCheck{},
				Monitors: CephMonitors{InQuorum: []string{}, OutOfQuorum: []string{}}, PGs: CephPGs{States: []CephPGState{}}}, nil
		}
		return nil, c.logged(ctx, "CephStatus", start, err)
	}
	res := &CephStatusResult{
		Installed: true,
		Health:    line(string(raw.Health.Status), 32),
		Checks:    []CephHealthCheck{},
		OSDs: CephOSDs{Total: int(max(raw.OSDMap.NumOSDs, 0)), Up: int(max(raw.OSDMap.NumUpOSDs, 0)),
			In: int(max(raw.OSDMap.NumInOSDs, 0))},
		PGs: CephPGs{Total: int(max(raw.PGMap.NumPGs, 0)), States: []CephPGState{}},
		Usage: CephUsage{Used: nonNegative(raw.PGMap.BytesUsed), Avail: nonNegative(raw.PGMap.BytesAvail),
			Total: nonNegative(raw.PGMap.BytesTotal)},
		Monitors: CephMonitors{InQuorum: []string{}, OutOfQuorum: []string{}},
	}
	for code, ch := range raw.Health.Checks {
		hc := CephHealthCheck{
			Code:     line(code, 64),
			Severity: line(string(ch.Severity), 32),
			Summary:  line(string(ch.Summary.Message), maxCephCheckText),
			Count:    int(max(ch.Summary.Count, 0)),
			Details:  []string{},
			Muted:    bool(ch.Muted),
		}
		for _, d := range ch.Detail {
			if len(hc.Details) == maxCephDetails {
				break
			}
			hc.Details = append(hc.Details, line(string(d.Message), maxCephCheckText))
		}
		res.Checks = append(res.Checks, hc)
	}
	// Errors before warnings, then by code, so the cap keeps what matters.
	slices.SortFunc(res.Checks, func(a, b CephHealthCheck) int {
		return cmp.Or(cmp.Compare(severityRank(b.Severity), severityRank(a.Severity)), strings.Compare(a.Code, b.Code))
	})
	res.ChecksTotal = len(res.Checks)
	res.Checks = res.Checks[:min(len(res.Checks), maxCephChecks)]
	quorum := map[string]bool{}
	for _, n := range raw.QuorumNames {
		quorum[string(n)] = true
	}
	res.Monitors.Count = len(raw.MonMap.Mons)
	for _, m := range raw.MonMap.Mons {
		name := line(string(m.Name), 64)
		list := &res.Monitors.OutOfQuorum
		if quorum[string(m.Name)] {
			list = &res.Monitors.InQuorum
		}
		if len(*list) < maxCephMonitors {
			*list = append(*list, name)
		}
	}
	for _, s := range raw.PGMap.PGsByState {
		if len(res.PGs.States) == maxCephPGStates {
			break
		}
		res.PGs.States = append(res.PGs.States, CephPGState{State: line(string(s.StateName), 128), Count: int(max(s.Count, 0))})
	}
	slices.SortStableFunc(res.PGs.States, func(a, b CephPGState) int { return cmp.Compare(b.Count, a.Count) })
	c.logged(ctx, "CephStatus", start, nil)
	return res, nil
}

func severityRank(s string) int {
	switch s {
	case "HEALTH_ERR":
		return 2
	case "HEALTH_WARN":
		return 1
	}
	return 0
}

// cephAbsent recognizes Proxmox's answers for a cluster without (working)
// Ceph packages or configuration (pve-manager PVE::Ceph::Tools
// check_ceph_installed / check_ceph_inited).
func cephAbsent(err error) (string, bool) {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusInternalServerError {
		return "", false
	}
	switch m := ae.Message; {
	case strings.Contains(m, "binary not installed"), strings.Contains(m, "ceph not installed"):
		return "Ceph is not installed on this cluster (Proxmox: " + m + ")", true
	case strings.Contains(m, "not initialized"):
		return "Ceph is installed but not initialized on this cluster (Proxmox: " + m + ")", true
	}
	return "", false
}
