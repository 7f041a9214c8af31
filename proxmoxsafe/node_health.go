package proxmoxsafe

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpNodeHealth is the name of [Client.NodeHealth].
const OpNodeHealth Operation = "NodeHealth"

// nodeHealthOp declares [Client.NodeHealth]: its reads are the node's
// services (the declared route), pending updates, disks, ZFS pools and
// replication jobs. Each part the token may not read says so; the rest
// still answers.
var nodeHealthOp = operation{info: OperationInfo{
	Name:         OpNodeHealth,
	Method:       "GET",
	Route:        "/nodes/{node}/services",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit",
			Note: "services and disks need it on the node, ZFS pools on / (disks/zfs); a part without it says not permitted"},
		{Path: pathNode, Name: "Sys.Modify", Optional: true,
			Note: "only for pending updates (apt/update); it also lets a token change the node's network, DNS and time, so grant it only where updates should be seen: without it updates say not permitted"},
		{Path: pathVMs, Name: "VM.Audit", Optional: true,
			Note: "replication jobs of guests without it are left out"},
	},
}}

// Bounds of [Client.NodeHealth]'s lists. A node has a few dozen
// services and disks, a handful of pools; the update list after months
// without upgrades can hold hundreds of packages.
const (
	// MaxHealthPackages caps the pending updates listed (Count counts all).
	MaxHealthPackages = 50
	maxHealthServices = 64
	maxHealthDisks    = 64
	maxHealthPools    = 32
	// maxZFSDetails bounds the per-pool detail reads (zpool status): pools
	// beyond it carry the list's state only.
	maxZFSDetails       = 8
	maxReplicationJobs  = 200
	maxHealthText       = 256
	maxReplicationError = 512
)

// The states of a part of a node's health ([HealthPart.Status]).
const (
	PartOK           = "ok"
	PartNotPermitted = "not permitted"
	PartOffline      = "offline"
	PartNotInstalled = "not installed"
	PartFailed       = "failed"
)

// NodeHealthInput selects the node [Client.NodeHealth] reports on.
type NodeHealthInput struct {
	// Node must be on the policy's node allowlist.
	Node string `json:"node" validate:"required,pve_node"`
}

// HealthPart says whether one part of a node's health could be read.
type HealthPart struct {
	// Status is "ok", "not permitted" (the token lacks the privilege
	// Problem names), "offline" (Proxmox could not reach the node),
	// "not installed" (ZFS without zfsutils-linux) or "failed".
	Status string `json:"status"`
	// Problem says why a part is not "ok", in one line.
	Problem string `json:"problem,omitempty"`
}

// NodeHealthResult is one node's health: each part read on its own, so
// one the token may not read, or that fails, leaves the others intact.
type NodeHealthResult struct {
	Node string `json:"node"`
	// Reachable is false when Proxmox could not forward the reads to the
	// node (offline or unreachable); the parts then say "offline".
	Reachable   bool            `json:"reachable"`
	Updates     NodeUpdates     `json:"updates"`
	Services    NodeServices    `json:"services"`
	Disks       NodeDisks       `json:"disks"`
	ZFS         NodeZFS         `json:"zfs"`
	Replication NodeReplication `json:"replication"`
}

// NodeUpdates are the pending package updates (GET …/apt/update): what
// Proxmox last computed, not refreshed by this read.
type NodeUpdates struct {
	HealthPart
	// Count counts every pending update.
	Count int `json:"count"`
	// Packages lists at most [MaxHealthPackages], by name.
	Packages []PackageUpdate `json:"packages"`
}

// PackageUpdate is one pending update.
type PackageUpdate struct {
	Package string `json:"package"`
	// OldVersion is empty for a package the update newly installs.
	OldVersion string `json:"old_version,omitempty"`
	Version    string `json:"version"`
	Origin     string `json:"origin,omitempty"`
}

// NodeServices are the node's services (GET …/services).
type NodeServices struct {
	HealthPart
	// Services are ordered by name, at most 64; Total counts all.
	Services []ServiceState `json:"services"`
	Total    int            `json:"total"`
	// Failed names the services systemd reports failed, and those
	// enabled but not active.
	Failed []string `json:"failed"`
}

// ServiceState is one systemd service of the node.
type ServiceState struct {
	Name string `json:"name"`
	// Active is systemd's ActiveState (active, inactive, failed, …),
	// State its SubState (running, dead, exited, …), Unit the unit file
	// state (enabled, disabled, masked, not-found, …).
	Active string `json:"active"`
	State  string `json:"state"`
	Unit   string `json:"unit"`
}

// NodeDisks are the node's local disks (GET …/disks/list, which runs
// smartctl on each).
type NodeDisks struct {
	HealthPart
	Disks []DiskHealth `json:"disks"`
	Total int          `json:"total"`
}

// DiskHealth is one disk: its model and what SMART says of it.
type DiskHealth struct {
	DevPath string `json:"devpath"`
	Model   string `json:"model,omitempty"`
	Serial  string `json:"serial,omitempty"`
	// Type is ssd, nvme, hdd, usb or unknown.
	Type string `json:"type,omitempty"`
	Size uint64 `json:"size"`
	// Health is smartctl's verdict: PASSED or OK, FAILED…, or UNKNOWN when
	// the disk has no SMART.
	Health string `json:"health,omitempty"`
	// Failing is true when the verdict is neither PASSED, OK nor UNKNOWN.
	Failing bool `json:"failing"`
	// Wearout is the remaining life in percent (100 = new); absent when
	// Proxmox reports "N/A" (no wear indicator: most HDDs, USB, some SSDs).
	Wearout *float64 `json:"wearout,omitempty"`
	// Used is what uses the disk (LVM, ZFS, partitions, …).
	Used string `json:"used,omitempty"`
}

// NodeZFS are the node's ZFS pools (GET …/disks/zfs and, per pool, its
// zpool status).
type NodeZFS struct {
	HealthPart
	Pools []ZFSPoolHealth `json:"pools"`
	Total int             `json:"total"`
}

// ZFSPoolHealth is one pool's state.
type ZFSPoolHealth struct {
	Name string `json:"name"`
	// State is ONLINE, DEGRADED, FAULTED, OFFLINE, UNAVAIL or REMOVED.
	State string `json:"state"`
	Size  uint64 `json:"size"`
	Alloc uint64 `json:"alloc"`
	Free  uint64 `json:"free"`
	// Frag is the fragmentation in percent.
	Frag int `json:"frag"`
	// Errors is zpool status' errors line, e.g. "No known data errors".
	Errors string `json:"errors,omitempty"`
	// Status and Action explain a pool that is not healthy and what to do.
	Status string `json:"status,omitempty"`
	Action string `json:"action,omitempty"`
	// Scan is the last or running scrub or resilver.
	Scan string `json:"scan,omitempty"`
	// Detail is false when the pool's zpool status was not read (beyond
	// the first 8 pools, or when that read failed).
	Detail bool `json:"detail"`
}

// NodeReplication are the replication jobs of the guests on the node
// (GET …/replication): Proxmox lists a job only on its source node.
type NodeReplication struct {
	HealthPart
	Jobs  []ReplicationStatus `json:"jobs"`
	Total int                 `json:"total"`
}

// ReplicationStatus is one replication job and how its last runs went.
type ReplicationStatus struct {
	// ID is "<vmid>-<n>".
	ID     string    `json:"id"`
	VMID   int       `json:"vmid"`
	Type   GuestType `json:"type,omitempty"`
	Target string    `json:"target"`
	// Schedule is a calendar event; Proxmox's default is "*/15".
	Schedule string `json:"schedule"`
	Disabled bool   `json:"disabled,omitempty"`
	// LastSync is the start of the last successful run, LastTry of the
	// last run; zero when never. NextSync is zero while the target is
	// offline.
	LastSync time.Time `json:"last_sync,omitzero"`
	LastTry  time.Time `json:"last_try,omitzero"`
	NextSync time.Time `json:"next_sync,omitzero"`
	// FailCount counts failed runs in a row (0 when healthy); Error is
	// the last failure's message, sanitized.
	FailCount int     `json:"fail_count"`
	Error     string  `json:"error,omitempty"`
	Duration  float64 `json:"duration_seconds,omitempty"`
}

type rawPackageUpdate struct {
	Package    pve.String `json:"Package"`
	OldVersion pve.String `json:"OldVersion"`
	Version    pve.String `json:"Version"`
	Origin     pve.String `json:"Origin"`
}

type rawService struct {
	Name        pve.String `json:"name"`
	Service     pve.String `json:"service"`
	ActiveState pve.String `json:"active-state"`
	State       pve.String `json:"state"`
	UnitState   pve.String `json:"unit-state"`
}

type rawDisk struct {
	DevPath pve.String `json:"devpath"`
	Model   pve.String `json:"model"`
	Serial  pve.String `json:"serial"`
	Type    pve.String `json:"type"`
	Size    pve.Int    `json:"size"`
	Health  pve.String `json:"health"`
	Wearout pve.String `json:"wearout"`
	Used    pve.String `json:"used"`
}

type rawZFSPool struct {
	Name   pve.String `json:"name"`
	Health pve.String `json:"health"`
	Size   pve.Int    `json:"size"`
	Alloc  pve.Int    `json:"alloc"`
	Free   pve.Int    `json:"free"`
	Frag   pve.Int    `json:"frag"`
}

type rawZFSDetail struct {
	State  pve.String `json:"state"`
	Errors pve.String `json:"errors"`
	Status pve.String `json:"status"`
	Action pve.String `json:"action"`
	Scan   pve.String `json:"scan"`
}

type rawReplication struct {
	ID        pve.String `json:"id"`
	Guest     pve.Int    `json:"guest"`
	VMType    pve.String `json:"vmtype"`
	Target    pve.String `json:"target"`
	Schedule  pve.String `json:"schedule"`
	Disable   pve.Bool   `json:"disable"`
	LastSync  pve.Int    `json:"last_sync"`
	LastTry   pve.Int    `json:"last_try"`
	NextSync  pve.Int    `json:"next_sync"`
	FailCount pve.Int    `json:"fail_count"`
	Error     pve.String `json:"error"`
	Duration  pve.Float  `json:"duration"`
}

// NodeHealth reports one node's health: pending package updates, service
// states, disks (model, SMART verdict, wear-out), ZFS pools (state,
// errors) and the replication jobs of its guests (last sync, failures).
// The node must be on the policy's allowlist; nothing is sent otherwise.
//
// The five reads are sent at once, then one zpool status per pool (at
// most 8). A part the token may not read (pending updates need
// Sys.Modify on the node) says "not permitted" and names the privilege;
// a node Proxmox cannot reach is reported with Reachable false and every
// part "offline". Only a cancelled context or a rejected token fails the
// call.
func (c *Client) NodeHealth(ctx context.Context, in NodeHealthInput) (*NodeHealthResult, error) {
	const op = OpNodeHealth
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	if err := c.policy.checkNode(in.Node); err != nil {
		return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
	}
	res, err := c.nodeHealth(ctx, in.Node)
	if err != nil {
		return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
	}
	c.logged(ctx, op, start, nil, nodeAttr(in.Node))
	return res, nil
}

// nodeHealth reads one allowlisted node's health.
func (c *Client) nodeHealth(ctx context.Context, node string) (*NodeHealthResult, error) {
	var (
		updates  []rawPackageUpdate
		services []rawService
		disks    []rawDisk
		pools    []rawZFSPool
		repl     []rawReplication
		errs     [5]error
		wg       sync.WaitGroup
	)
	base := pve.Path("nodes", node)
	wg.Go(func() { errs[0] = c.get(ctx, base+"/apt/update", nil, &updates) })
	wg.Go(func() { errs[1] = c.get(ctx, base+"/services", nil, &services) })
	wg.Go(func() { errs[2] = c.get(ctx, base+"/disks/list", nil, &disks) })
	wg.Go(func() { errs[3] = c.get(ctx, base+"/disks/zfs", nil, &pools) })
	wg.Go(func() { errs[4] = c.get(ctx, base+"/replication", nil, &repl) })
	wg.Wait()
	for _, err := range errs {
		if err != nil && fatalRead(ctx, err) {
			return nil, err
		}
	}
	res := &NodeHealthResult{Node: node, Reachable: true}
	for _, err := range errs {
		if isForwardError(err) {
			res.Reachable = false
		}
	}
	res.Updates = NodeUpdates{HealthPart: partOf(errs[0]), Packages: []PackageUpdate{}}
	if errs[0] == nil {
		res.Updates.Count = len(updates)
		slices.SortFunc(updates, func(a, b rawPackageUpdate) int { return strings.Compare(string(a.Package), string(b.Package)) })
		for _, u := range updates[:min(len(updates), MaxHealthPackages)] {
			res.Updates.Packages = append(res.Updates.Packages, PackageUpdate{Package: line(string(u.Package), 128),
				OldVersion: line(string(u.OldVersion), 64), Version: line(string(u.Version), 64), Origin: line(string(u.Origin), 64)})
		}
	}
	res.Services = NodeServices{HealthPart: partOf(errs[1]), Services: []ServiceState{}, Failed: []string{}}
	if errs[1] == nil {
		res.Services.Total = len(services)
		slices.SortFunc(services, func(a, b rawService) int { return strings.Compare(serviceName(a), serviceName(b)) })
		for _, s := range services {
			st := ServiceState{Name: line(serviceName(s), 64), Active: line(string(s.ActiveState), 32),
				State: line(string(s.State), 32), Unit: line(string(s.UnitState), 32)}
			if st.Active == "failed" || (st.Unit == "enabled" && st.Active != "active" && st.Active != "activating" && st.Active != "reloading") {
				if len(res.Services.Failed) < maxHealthServices {
					res.Services.Failed = append(res.Services.Failed, st.Name)
				}
			}
			if len(res.Services.Services) < maxHealthServices {
				res.Services.Services = append(res.Services.Services, st)
			}
		}
	}
	res.Disks = NodeDisks{HealthPart: partOf(errs[2]), Disks: []DiskHealth{}}
	if errs[2] == nil {
		res.Disks.Total = len(disks)
		slices.SortFunc(disks, func(a, b rawDisk) int { return strings.Compare(string(a.DevPath), string(b.DevPath)) })
		for _, d := range disks[:min(len(disks), maxHealthDisks)] {
			res.Disks.Disks = append(res.Disks.Disks, diskHealth(d))
		}
	}
	res.ZFS = NodeZFS{HealthPart: partOf(errs[3]), Pools: []ZFSPoolHealth{}}
	if errs[3] != nil && zfsNotInstalled(errs[3]) {
		res.ZFS.HealthPart = HealthPart{Status: PartNotInstalled, Problem: "zfsutils-linux is not installed on the node"}
	}
	if errs[3] == nil {
		res.ZFS.Total = len(pools)
		slices.SortFunc(pools, func(a, b rawZFSPool) int { return strings.Compare(string(a.Name), string(b.Name)) })
		for _, p := range pools[:min(len(pools), maxHealthPools)] {
			res.ZFS.Pools = append(res.ZFS.Pools, ZFSPoolHealth{Name: line(string(p.Name), 64), State: line(string(p.Health), 32),
				Size: nonNegative(p.Size), Alloc: nonNegative(p.Alloc), Free: nonNegative(p.Free), Frag: int(p.Frag)})
		}
		if err := c.zfsDetails(ctx, node, res.ZFS.Pools); err != nil {
			return nil, err
		}
	}
	res.Replication = NodeReplication{HealthPart: partOf(errs[4]), Jobs: []ReplicationStatus{}}
	if errs[4] == nil {
		res.Replication.Total = len(repl)
		slices.SortFunc(repl, func(a, b rawReplication) int { return strings.Compare(string(a.ID), string(b.ID)) })
		for _, r := range repl[:min(len(repl), maxReplicationJobs)] {
			res.Replication.Jobs = append(res.Replication.Jobs, replicationStatus(r))
		}
	}
	return res, nil
}

// zfsDetails reads zpool status of the first pools at once and fills in
// their errors, status, action and scan. A failed detail read leaves the
// pool with the list's state (Detail false); only a fatal error fails.
func (c *Client) zfsDetails(ctx context.Context, node string, pools []ZFSPoolHealth) error {
	n := min(len(pools), maxZFSDetails)
	details := make([]rawZFSDetail, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		if !ValidStorage(pools[i].Name) {
			// Proxmox takes the pool's name as a storage id; another
			// name cannot be asked for (nor pass the transport guard).
			errs[i] = errSkipped
			continue
		}
		wg.Go(func() {
			errs[i] = c.get(ctx, pve.Path("nodes", node, "disks", "zfs", pools[i].Name), nil, &details[i])
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			if fatalRead(ctx, errs[i]) {
				return errs[i]
			}
			continue
		}
		d, p := details[i], &pools[i]
		p.Detail = true
		p.State = cmp.Or(line(string(d.State), 32), p.State)
		p.Errors = line(string(d.Errors), maxHealthText)
		p.Status = line(string(d.Status), maxHealthText)
		p.Action = line(string(d.Action), maxHealthText)
		p.Scan = line(string(d.Scan), maxHealthText)
	}
	return nil
}

func serviceName(s rawService) string { return string(cmp.Or(s.Name, s.Service)) }

func diskHealth(d rawDisk) DiskHealth {
	out := DiskHealth{DevPath: line(string(d.DevPath), 128), Model: line(string(d.Model), 128), Serial: line(string(d.Serial), 64),
		Type: line(string(d.Type), 16), Size: nonNegative(d.Size), Health: line(string(d.Health), 64), Used: line(string(d.Used), 64)}
	switch h := strings.ToUpper(out.Health); {
	case h == "", h == "PASSED", h == "OK", h == "UNKNOWN":
	default:
		out.Failing = true
	}
	// A number, or the string "N/A" for a disk without a wear indicator.
	if w, err := strconv.ParseFloat(strings.TrimSpace(string(d.Wearout)), 64); err == nil && w >= 0 && w <= 100 {
		out.Wearout = &w
	}
	return out
}

func replicationStatus(r rawReplication) ReplicationStatus {
	out := ReplicationStatus{ID: line(string(r.ID), 32), VMID: int(r.Guest), Type: replicationType(string(r.VMType)),
		Target: line(string(r.Target), MaxNodeLen), Schedule: line(cmp.Or(string(r.Schedule), "*/15"), 128), Disabled: bool(r.Disable),
		FailCount: int(r.FailCount), Error: line(string(r.Error), maxReplicationError), Duration: float64(r.Duration)}
	out.LastSync, out.LastTry, out.NextSync = epoch(r.LastSync), epoch(r.LastTry), epoch(r.NextSync)
	return out
}

func replicationType(t string) GuestType {
	switch t {
	case "qemu":
		return TypeQEMU
	case "lxc":
		return TypeLXC
	}
	return ""
}

// epoch is a Proxmox epoch as a time, zero for 0 (never).
func epoch(n pve.Int) time.Time {
	if n <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(n), 0).UTC()
}

// errSkipped marks a read not sent.
var errSkipped = errors.New("not read")

// partOf says what one part's read came to.
func partOf(err error) HealthPart {
	var ae *APIError
	switch {
	case err == nil:
		return HealthPart{Status: PartOK}
	case isForwardError(err):
		return HealthPart{Status: PartOffline, Problem: "the node could not be reached: " + line(err.Error(), maxHealthText)}
	case errors.Is(err, ErrForbidden):
		if errors.As(err, &ae) {
			if path, priv, ok := parsePermissionCheck(ae.Message); ok {
				return HealthPart{Status: PartNotPermitted, Problem: "the token lacks " + priv + " on " + path}
			}
		}
		return HealthPart{Status: PartNotPermitted, Problem: "the token lacks a privilege for this read"}
	}
	return HealthPart{Status: PartFailed, Problem: line(err.Error(), maxHealthText)}
}

// isForwardError reports a 595-599 answer: pveproxy could not forward
// the request to the node.
func isForwardError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && forwardStatus(ae.StatusCode) != ""
}

// zfsNotInstalled is the answer of a node without zfsutils-linux.
func zfsNotInstalled(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && strings.Contains(ae.Message, "zfsutils-linux not installed")
}
