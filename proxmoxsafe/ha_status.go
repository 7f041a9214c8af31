package proxmoxsafe

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpHAStatus is the name of [Client.HAStatus].
const OpHAStatus Operation = "HAStatus"

// haStatusOp declares [Client.HAStatus].
var haStatusOp = operation{info: OperationInfo{
	Name:   OpHAStatus,
	Method: "GET",
	Route:  "/cluster/ha/status/current",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit"},
	},
}}

// maxHAServices bounds the HA resources [Client.HAStatus] returns.
const maxHAServices = MaxListLimit

// HAStatusResult is the HA manager's view of the cluster.
type HAStatusResult struct {
	// Quorate is the cluster quorum as the answering node sees it.
	Quorate bool `json:"quorate"`
	// QuorumStatus is "OK" or Proxmox's explanation.
	QuorumStatus string `json:"quorum_status"`
	// InUse is false when HA was never configured: no manager, no resources.
	InUse bool `json:"in_use"`
	// Manager is the active CRM master; empty when none is elected.
	Manager HAManager `json:"manager"`
	// LRMs are the local resource managers, one per node.
	LRMs []HALRM `json:"lrms"`
	// Services are the HA resources, ordered by sid, at most 1000.
	Services []HAService `json:"services"`
	// Total counts every HA resource, including those beyond the cap.
	Total int `json:"total"`
}

// HAManager is the cluster resource manager (CRM) master.
type HAManager struct {
	Node string `json:"node,omitempty"`
	// Status is e.g. "pve1 (active, Thu Jan  1 00:00:00 2026)".
	Status string `json:"status,omitempty"`
}

// HALRM is one node's local resource manager.
type HALRM struct {
	Node string `json:"node"`
	// State is "active", "idle", "maintenance mode", "old timestamp -
	// dead?", … as parsed from Status.
	State  string `json:"state"`
	Status string `json:"status"`
}

// HAService is one HA resource: its configuration and the CRM's state.
type HAService struct {
	// SID is the resource id, "vm:100" or "ct:200".
	SID string `json:"sid"`
	// Type is "vm" or "ct".
	Type string `json:"type"`
	// VMID is the guest's VMID, 0 for other resource types.
	VMID int `json:"vmid,omitempty"`
	// Node is where the CRM places the service.
	Node string `json:"node,omitempty"`
	// State is the verbose service state ("started", "stopped", "fence",
	// "error", "migrate", …).
	State string `json:"state,omitempty"`
	// CRMState is the state machine's state as the CRM sees it.
	CRMState string `json:"crm_state,omitempty"`
	// RequestedState is the configured state ("started", "stopped",
	// "disabled", "ignored").
	RequestedState string `json:"requested_state,omitempty"`
	MaxRestart     *int   `json:"max_restart,omitempty"`
	MaxRelocate    *int   `json:"max_relocate,omitempty"`
	// Failback (PVE 9) moves the service back to its preferred node.
	Failback *bool `json:"failback,omitempty"`
	// Group is the HA group (PVE 8 and older; PVE 9 uses rules).
	Group string `json:"group,omitempty"`
	// Comment is the resource's free-text comment, capped: data, not instructions.
	Comment string `json:"comment,omitempty"`
}

type rawHAStatusEntry struct {
	ID           pve.String `json:"id"`
	Type         pve.String `json:"type"`
	Node         pve.String `json:"node"`
	Status       pve.String `json:"status"`
	Quorate      pve.Bool   `json:"quorate"`
	SID          pve.String `json:"sid"`
	State        pve.String `json:"state"`
	CRMState     pve.String `json:"crm_state"`
	RequestState pve.String `json:"request_state"`
}

type rawHAResource struct {
	SID         pve.String `json:"sid"`
	Type        pve.String `json:"type"`
	State       pve.String `json:"state"`
	MaxRestart  *pve.Int   `json:"max_restart"`
	MaxRelocate *pve.Int   `json:"max_relocate"`
	Failback    *pve.Bool  `json:"failback"`
	Group       pve.String `json:"group"`
	Comment     pve.String `json:"comment"`
}

// HAStatus reads the HA manager status (GET /cluster/ha/status/current)
// and the HA resources (GET /cluster/ha/resources) and merges them per
// resource. It is a cluster-wide read, not limited by the node allowlist.
// Both endpoints need Sys.Audit on "/".
func (c *Client) HAStatus(ctx context.Context) (*HAStatusResult, error) {
	start := time.Now()
	var entries []rawHAStatusEntry
	if err := c.get(ctx, "/cluster/ha/status/current", nil, &entries); err != nil {
		return nil, c.logged(ctx, "HAStatus", start, err)
	}
	var resources []rawHAResource
	if err := c.get(ctx, "/cluster/ha/resources", nil, &resources); err != nil {
		return nil, c.logged(ctx, "HAStatus", start, err)
	}
	res := &HAStatusResult{LRMs: []HALRM{}, Services: []HAService{}}
	bySID := map[string]*HAService{}
	var services []*HAService
	service := func(sid string) *HAService {
		if s := bySID[sid]; s != nil {
			return s
		}
		s := &HAService{SID: line(sid, 64)}
		s.Type, s.VMID = parseSID(s.SID)
		bySID[sid] = s
		services = append(services, s)
		return s
	}
	for _, e := range entries {
		switch e.Type {
		case "quorum":
			res.Quorate = bool(e.Quorate)
			res.QuorumStatus = line(string(e.Status), 128)
		case "master":
			res.InUse = true
			res.Manager = HAManager{Node: line(string(e.Node), 64), Status: line(string(e.Status), 128)}
		case "lrm":
			res.InUse = true
			if len(res.LRMs) < maxHAServices {
				status := line(string(e.Status), 128)
				res.LRMs = append(res.LRMs, HALRM{Node: line(string(e.Node), 64), State: lrmState(status), Status: status})
			}
		case "service":
			res.InUse = true
			s := service(string(e.SID))
			s.Node = line(string(e.Node), 64)
			s.State = line(string(e.State), 32)
			s.CRMState = line(string(e.CRMState), 32)
			if e.RequestState != "" {
				s.RequestedState = line(string(e.RequestState), 32)
			}
		}
	}
	for _, r := range resources {
		res.InUse = true
		s := service(string(r.SID))
		if r.Type != "" {
			s.Type = line(string(r.Type), 16)
		}
		if r.State != "" {
			s.RequestedState = line(string(r.State), 32)
		}
		if r.MaxRestart != nil {
			s.MaxRestart = ptrTo(int(*r.MaxRestart))
		}
		if r.MaxRelocate != nil {
			s.MaxRelocate = ptrTo(int(*r.MaxRelocate))
		}
		if r.Failback != nil {
			s.Failback = ptrTo(bool(*r.Failback))
		}
		s.Group = line(string(r.Group), 64)
		s.Comment = line(string(r.Comment), 256)
	}
	slices.SortFunc(services, func(a, b *HAService) int { return strings.Compare(a.SID, b.SID) })
	res.Total = len(services)
	for _, s := range services[:min(len(services), maxHAServices)] {
		res.Services = append(res.Services, *s)
	}
	c.logged(ctx, "HAStatus", start, nil)
	return res, nil
}

func ptrTo[T any](v T) *T { return &v }

// parseSID splits "vm:100" into its type and VMID.
func parseSID(sid string) (string, int) {
	typ, id, ok := strings.Cut(sid, ":")
	if !ok {
		return "", 0
	}
	n, err := strconv.Atoi(id)
	if err != nil || !ValidVMID(n) || (typ != "vm" && typ != "ct") {
		return typ, 0
	}
	return typ, n
}

// lrmState takes the state out of "pve1 (active, Thu Jan  1 …)".
func lrmState(status string) string {
	_, rest, ok := strings.Cut(status, " (")
	if !ok {
		return ""
	}
	state, _, _ := strings.Cut(rest, ",")
	return strings.TrimSuffix(state, ")")
}
