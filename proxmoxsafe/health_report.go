package proxmoxsafe

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// OpHealthReport is the name of [Client.HealthReport].
const OpHealthReport Operation = "HealthReport"

// healthReportOp declares [Client.HealthReport]: its first request is the
// cluster status; it reuses the reads of cluster_status, ha_status,
// ceph_status, storage_list, node_health, backup_coverage, snapshot_list
// and guest_config.
var healthReportOp = operation{info: OperationInfo{
	Name:   OpHealthReport,
	Method: "GET",
	Route:  "/cluster/status",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit", Note: "cluster status, HA, Ceph, backup jobs and each node's health (see node_health); a check it cannot make is an info finding"},
		{Path: pathVMs, Name: "VM.Audit", Note: "guests without it are not checked"},
		{Path: pathStorage, Name: "Datastore.Audit", Note: "storages without it are not checked; backups as backup_coverage sees them"},
		{Path: pathNode, Name: "Sys.Modify", Optional: true, Note: "pending updates, as node_health; never recommended"},
	},
}}

// The defaults of [HealthThresholds].
const (
	DefaultStorageWarnPercent     = 80
	DefaultStorageCriticalPercent = 90
	DefaultSnapshotMaxAgeDays     = 30
	DefaultWearoutPercent         = 10
	DefaultHealthGuestReads       = 100
	// MaxHealthGuestReads bounds [HealthThresholds.MaxGuestReads].
	MaxHealthGuestReads = 2000
)

// HealthThresholds are the operator's thresholds of [Client.HealthReport]
// ([Config.Health]). The zero value of each field is its default.
type HealthThresholds struct {
	// StorageWarnPercent and StorageCriticalPercent: a storage at least
	// this full is a warning, a critical finding (default 80 and 90;
	// 1 to 100, warn at most critical).
	StorageWarnPercent     int
	StorageCriticalPercent int
	// BackupMaxAgeDays: a guest whose newest backup is older is a
	// warning (default [DefaultBackupMaxAgeDays], 7).
	BackupMaxAgeDays int
	// SnapshotMaxAgeDays: snapshots older than this are an info finding
	// (default 30).
	SnapshotMaxAgeDays int
	// WearoutPercent: a disk with at most this much life left is worn
	// out, a warning (default 10).
	WearoutPercent int
	// MaxGuestReads bounds the per-guest reads of one report: at most
	// this many snapshot lists and this many VM configs (default 100, at
	// most [MaxHealthGuestReads]); guests beyond it are named in one info
	// finding as not checked.
	MaxGuestReads int
}

// withDefaults fills the zero fields.
func (h HealthThresholds) withDefaults() HealthThresholds {
	h.StorageWarnPercent = cmp.Or(h.StorageWarnPercent, DefaultStorageWarnPercent)
	h.StorageCriticalPercent = cmp.Or(h.StorageCriticalPercent, DefaultStorageCriticalPercent)
	h.BackupMaxAgeDays = cmp.Or(h.BackupMaxAgeDays, DefaultBackupMaxAgeDays)
	h.SnapshotMaxAgeDays = cmp.Or(h.SnapshotMaxAgeDays, DefaultSnapshotMaxAgeDays)
	h.WearoutPercent = cmp.Or(h.WearoutPercent, DefaultWearoutPercent)
	h.MaxGuestReads = cmp.Or(h.MaxGuestReads, DefaultHealthGuestReads)
	return h
}

// check refuses thresholds out of range (New).
func (h HealthThresholds) check() error {
	d := h.withDefaults()
	switch {
	case d.StorageWarnPercent < 1 || d.StorageWarnPercent > 100, d.StorageCriticalPercent < 1 || d.StorageCriticalPercent > 100:
		return configError("Health", "storage thresholds must be 1 to 100 percent")
	case d.StorageWarnPercent > d.StorageCriticalPercent:
		return configError("Health", "the storage warning threshold must not exceed the critical one")
	case d.BackupMaxAgeDays < 1 || d.BackupMaxAgeDays > 3650, d.SnapshotMaxAgeDays < 1 || d.SnapshotMaxAgeDays > 3650:
		return configError("Health", "ages must be 1 to 3650 days")
	case d.WearoutPercent < 1 || d.WearoutPercent > 100:
		return configError("Health", "the wear-out threshold must be 1 to 100 percent")
	case d.MaxGuestReads < 1 || d.MaxGuestReads > MaxHealthGuestReads:
		return configError("Health", "the guest reads must be 1 to %d", MaxHealthGuestReads)
	}
	return nil
}

// Severities of a [HealthFinding], most severe first.
const (
	SeverityCritical = "critical"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// CompareSeverity orders severities most severe first: negative when a is
// more severe than b, 0 when they are the same, positive when less.
func CompareSeverity(a, b string) int { return findingRank[a] - findingRank[b] }

// HealthReportInput selects what [Client.HealthReport] checks.
type HealthReportInput struct {
	// Node limits the node and guest checks to one allowlisted node; the
	// quorum, HA and Ceph checks still run. Empty: the whole cluster.
	Node string `json:"node,omitempty" validate:"omitempty,pve_node"`
	// MinSeverity leaves out less severe findings (default info: all).
	MinSeverity string `json:"min_severity,omitempty" validate:"omitempty,oneof=critical warning info"`
	// Limit caps the findings returned (default 200, at most 1000); Total
	// counts them all.
	Limit int `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Default 200."`
}

// HealthReportResult is the findings, most severe first.
type HealthReportResult struct {
	// Scope is "cluster" or the node checked.
	Scope    string          `json:"scope"`
	Findings []HealthFinding `json:"findings"`
	// Total counts every finding at MinSeverity or above, also beyond Limit.
	Total    int `json:"total"`
	Critical int `json:"critical"`
	Warning  int `json:"warning"`
	Info     int `json:"info"`
	// Nodes are the nodes whose health was read; Guests the guests checked.
	Nodes  []string `json:"nodes"`
	Guests int      `json:"guests"`
}

// HealthFinding is one thing wrong, with its evidence and the tool to
// inspect or fix it.
type HealthFinding struct {
	Severity string `json:"severity"`
	// Kind is one of node-offline, not-quorate, ceph, ha-error,
	// replication, zfs, disk-smart, disk-wearout, service, storage,
	// updates, no-backup, backup-old, snapshot-old, agent-disabled,
	// not-checked.
	Kind string `json:"kind"`
	// Subject is what it is about: "node pve2", "pve1/qemu/100",
	// "storage local-lvm on pve1", "cluster".
	Subject string `json:"subject"`
	// Evidence is the facts read, in one line.
	Evidence string `json:"evidence"`
	// Tool is the tool to inspect or fix it.
	Tool string `json:"tool"`
}

// healthGuestParallel bounds the per-guest reads in flight at once.
const healthGuestParallel = 6

// HealthReport checks the cluster (or one node) and returns findings
// rated critical, warning or info, each with its evidence and the tool
// to use: a node offline or the cluster not quorate, Ceph not healthy,
// HA resources in error, failing replication, ZFS pools not online,
// disks failing SMART or worn out, failed services, storages above the
// thresholds, pending updates, guests without a backup or with none
// newer than the threshold, snapshots older than the threshold, running
// VMs with the guest agent disabled. Thresholds are the operator's
// ([Config.Health]); per-guest reads are bounded by MaxGuestReads, and
// guests beyond it are one info finding. A check the token may not make
// (or that fails) is an info finding, not an error; only a cancelled
// call or a rejected token fails. Node health is read only for
// allowlisted, online nodes.
func (c *Client) HealthReport(ctx context.Context, in HealthReportInput) (*HealthReportResult, error) {
	const op = OpHealthReport
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	if in.Node != "" {
		if err := c.policy.checkNode(in.Node); err != nil {
			return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
		}
	}
	r := &healthRun{c: c, in: in, th: c.health.withDefaults(), now: start}
	if err := r.run(ctx); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	res := r.result()
	c.logged(ctx, op, start, nil)
	return res, nil
}

type healthRun struct {
	c   *Client
	in  HealthReportInput
	th  HealthThresholds
	now time.Time

	mu       sync.Mutex
	findings []HealthFinding
	fatal    error
	nodes    []string
	guests   int
}

func (r *healthRun) add(sev, kind, subject, evidence, tool string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings = append(r.findings, HealthFinding{Severity: sev, Kind: kind, Subject: subject, Evidence: line(evidence, 512), Tool: tool})
}

// failed records a read that could not be made: fatal ones end the
// report, the others are an info finding.
func (r *healthRun) failed(ctx context.Context, what string, err error) {
	if fatalRead(ctx, err) {
		r.mu.Lock()
		if r.fatal == nil {
			r.fatal = err
		}
		r.mu.Unlock()
		return
	}
	r.add(SeverityInfo, "not-checked", "cluster", what+" not checked: "+err.Error(), "permissions_check")
}

func (r *healthRun) inScope(node string) bool { return r.in.Node == "" || node == r.in.Node }

func (r *healthRun) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		cs               *ClusterStatusResult
		raw              []rawResource
		csErr, guestsErr error
		wg               sync.WaitGroup
	)
	wg.Go(func() { cs, csErr = r.c.ClusterStatus(ctx) })
	wg.Go(func() { raw, guestsErr = r.c.vmResources(ctx) })
	wg.Wait()
	if csErr != nil {
		r.failed(ctx, "quorum and nodes", csErr)
	}
	templates := map[int]bool{}
	for _, g := range raw {
		if g.Template {
			templates[int(g.VMID)] = true
		}
	}
	wg.Go(func() { r.checkHA(ctx) })
	wg.Go(func() { r.checkCeph(ctx) })
	wg.Go(func() { r.checkStorage(ctx) })
	wg.Go(func() { r.checkBackups(ctx, templates) })
	if guestsErr != nil {
		r.failed(ctx, "guests", guestsErr)
	} else {
		wg.Go(func() { r.checkGuests(ctx, raw) })
	}
	var online []string
	if cs != nil {
		if !cs.Quorate {
			r.add(SeverityCritical, "not-quorate", "cluster", "the cluster "+cs.Name+" has no quorum: configuration changes and HA are blocked", "cluster_status")
		}
		for _, n := range cs.Nodes {
			if !r.inScope(n.Name) {
				continue
			}
			if !n.Online {
				r.add(SeverityCritical, "node-offline", "node "+n.Name, "the cluster does not see node "+n.Name+" (offline or unreachable)", "cluster_status")
				continue
			}
			if r.c.policy.nodes[n.Name] {
				online = append(online, n.Name)
			}
		}
	}
	for _, n := range online {
		wg.Go(func() { r.checkNode(ctx, n) })
	}
	wg.Wait()
	r.nodes = online
	return r.fatal
}

func (r *healthRun) checkHA(ctx context.Context) {
	ha, err := r.c.HAStatus(ctx)
	if err != nil {
		r.failed(ctx, "HA", err)
		return
	}
	for _, s := range ha.Services {
		if s.State == "error" && (s.Node == "" || r.inScope(s.Node)) {
			r.add(SeverityCritical, "ha-error", "HA resource "+s.SID, fmt.Sprintf("%s on %s is in state error (requested %s): the HA manager does not act on it until it is disabled and fixed", s.SID, s.Node, s.RequestedState), "ha_status")
		}
	}
}

func (r *healthRun) checkCeph(ctx context.Context) {
	ceph, err := r.c.CephStatus(ctx)
	if err != nil {
		r.failed(ctx, "Ceph", err)
		return
	}
	if !ceph.Installed || ceph.Health == "" || ceph.Health == "HEALTH_OK" {
		return
	}
	sev := SeverityWarning
	if ceph.Health == "HEALTH_ERR" {
		sev = SeverityCritical
	}
	var checks []string
	for _, ch := range ceph.Checks[:min(len(ceph.Checks), 5)] {
		checks = append(checks, ch.Code+": "+ch.Summary)
	}
	r.add(sev, "ceph", "Ceph", ceph.Health+": "+strings.Join(checks, "; "), "ceph_status")
}

func (r *healthRun) checkStorage(ctx context.Context) {
	st, err := r.c.ListStorage(ctx, ListStorageInput{Limit: MaxListLimit})
	if err != nil {
		r.failed(ctx, "storage usage", err)
		return
	}
	shared := map[string]bool{}
	for _, s := range st.Storages {
		if s.Total == 0 || !r.inScope(s.Node) || shared[s.Storage] {
			continue
		}
		subject := "storage " + s.Storage + " on " + s.Node
		if s.Shared {
			// The same storage on every node: one finding.
			shared[s.Storage] = true
			subject = "storage " + s.Storage + " (shared)"
		}
		pct := float64(s.Used) * 100 / float64(s.Total)
		sev := ""
		switch {
		case pct >= float64(r.th.StorageCriticalPercent):
			sev = SeverityCritical
		case pct >= float64(r.th.StorageWarnPercent):
			sev = SeverityWarning
		default:
			continue
		}
		r.add(sev, "storage", subject, fmt.Sprintf("%.0f%% used (%s of %s; thresholds %d%%/%d%%)", pct, gibText(s.Used), gibText(s.Total), r.th.StorageWarnPercent, r.th.StorageCriticalPercent), "storage_list")
	}
}

func gibText(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB" }

func (r *healthRun) checkNode(ctx context.Context, node string) {
	h, err := r.c.nodeHealth(ctx, node)
	if err != nil {
		r.failed(ctx, "node "+node, err)
		return
	}
	subject := "node " + node
	for name, p := range map[string]HealthPart{"pending updates": h.Updates.HealthPart, "services": h.Services.HealthPart,
		"disks": h.Disks.HealthPart, "ZFS pools": h.ZFS.HealthPart, "replication": h.Replication.HealthPart} {
		if p.Status != PartOK && p.Status != PartNotInstalled {
			r.add(SeverityInfo, "not-checked", subject, name+" not checked ("+p.Status+"): "+p.Problem, "node_health")
		}
	}
	if h.Updates.Count > 0 {
		var names []string
		for _, p := range h.Updates.Packages[:min(len(h.Updates.Packages), 5)] {
			names = append(names, p.Package)
		}
		more := ""
		if h.Updates.Count > len(names) {
			more = ", …"
		}
		r.add(SeverityInfo, "updates", subject, fmt.Sprintf("%d package updates pending (%s%s)", h.Updates.Count, strings.Join(names, ", "), more), "node_health")
	}
	for _, s := range h.Services.Failed {
		r.add(SeverityWarning, "service", subject, "service "+s+" is not running (failed, or enabled but inactive)", "node_health")
	}
	for _, d := range h.Disks.Disks {
		if d.Failing {
			r.add(SeverityCritical, "disk-smart", subject, fmt.Sprintf("disk %s (%s) fails SMART: %s", d.DevPath, d.Model, d.Health), "node_health")
		}
		if d.Wearout != nil && *d.Wearout <= float64(r.th.WearoutPercent) {
			r.add(SeverityWarning, "disk-wearout", subject, fmt.Sprintf("disk %s (%s) is worn out: %.0f%% life left (threshold %d%%)", d.DevPath, d.Model, *d.Wearout, r.th.WearoutPercent), "node_health")
		}
	}
	for _, p := range h.ZFS.Pools {
		switch {
		case p.State != "ONLINE":
			sev := SeverityCritical
			if p.State == "DEGRADED" {
				sev = SeverityWarning
			}
			r.add(sev, "zfs", subject, "ZFS pool "+p.Name+" is "+p.State+joinNonEmpty(": ", p.Status, p.Action), "node_health")
		case p.Errors != "" && p.Errors != "No known data errors":
			r.add(SeverityWarning, "zfs", subject, "ZFS pool "+p.Name+": "+p.Errors, "node_health")
		}
	}
	for _, j := range h.Replication.Jobs {
		if j.FailCount == 0 && j.Error == "" {
			continue
		}
		sev := SeverityWarning
		if j.FailCount >= 3 {
			sev = SeverityCritical
		}
		last := "never"
		if !j.LastSync.IsZero() {
			last = j.LastSync.Format(time.RFC3339)
		}
		r.add(sev, "replication", "replication "+j.ID, fmt.Sprintf("job %s (guest %d to %s) failed %d times in a row, last sync %s: %s", j.ID, j.VMID, j.Target, j.FailCount, last, j.Error), "node_health")
	}
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return sep + strings.Join(out, " ")
}

// checkBackups reuses backup_coverage, page by page (at most 10 pages of
// 1000 guests). Templates are left out: a template is a source, rarely
// backed up.
func (r *healthRun) checkBackups(ctx context.Context, templates map[int]bool) {
	cursor := ""
	for range 10 {
		cov, err := r.c.BackupCoverage(ctx, BackupCoverageInput{MaxAgeDays: r.th.BackupMaxAgeDays, Limit: MaxListLimit, Cursor: cursor})
		if err != nil {
			r.failed(ctx, "backups", err)
			return
		}
		for _, g := range cov.Guests {
			if !r.inScope(g.Node) || templates[g.VMID] {
				continue
			}
			subject := g.Node + "/" + string(g.Type) + "/" + strconv.Itoa(g.VMID)
			for _, f := range g.Findings {
				switch {
				case f == "no backup":
					r.add(SeverityWarning, "no-backup", subject, fmt.Sprintf("%s (%s) has no backup on any backup storage its node lists (or the token may not see it: Datastore.AllocateSpace and VM.Backup)", subject, g.Name), "backup_coverage")
				case strings.HasPrefix(f, "newest backup older than"):
					r.add(SeverityWarning, "backup-old", subject, fmt.Sprintf("%s (%s): newest backup is %d days old (on %s; threshold %d days)", subject, g.Name, g.AgeDays, g.Storage, r.th.BackupMaxAgeDays), "backup_coverage")
				}
			}
		}
		if cursor = cov.NextCursor; cursor == "" {
			return
		}
	}
	r.add(SeverityInfo, "not-checked", "cluster", "backups of guests beyond the first 10000 not checked", "backup_coverage")
}

// checkGuests reads, for the guests on allowlisted nodes in scope (by
// VMID, at most MaxGuestReads each), the snapshot lists and the running
// VMs' configs, at most 6 at once.
func (r *healthRun) checkGuests(ctx context.Context, raw []rawResource) {
	var snaps, configs []GuestRef
	skipped := map[string]int{}
	slices.SortFunc(raw, func(a, b rawResource) int { return int(a.VMID - b.VMID) })
	for _, g := range raw {
		node := string(g.Node)
		if (g.Type != "qemu" && g.Type != "lxc") || bool(g.Template) || !r.inScope(node) || !r.c.policy.nodes[node] || !ValidVMID(int(g.VMID)) {
			continue
		}
		ref := GuestRef{Node: node, Type: GuestType(g.Type), VMID: int(g.VMID)}
		if len(snaps) < r.th.MaxGuestReads {
			snaps = append(snaps, ref)
		} else {
			skipped["snapshots"]++
		}
		if g.Type == "qemu" && g.Status == "running" {
			if len(configs) < r.th.MaxGuestReads {
				configs = append(configs, ref)
			} else {
				skipped["agent"]++
			}
		}
	}
	r.mu.Lock()
	r.guests = len(snaps) + skipped["snapshots"]
	r.mu.Unlock()
	sem := make(chan struct{}, healthGuestParallel)
	var wg sync.WaitGroup
	maxAge := time.Duration(r.th.SnapshotMaxAgeDays) * 24 * time.Hour
	for _, ref := range snaps {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			res, err := r.c.ListSnapshots(ctx, ListSnapshotsInput{GuestRef: ref})
			if err != nil {
				r.failed(ctx, "snapshots of "+ref.Target().String(), err)
				return
			}
			old, oldest := 0, time.Time{}
			for _, s := range res.Snapshots {
				if !s.Time.IsZero() && r.now.Sub(s.Time) > maxAge {
					old++
					if oldest.IsZero() || s.Time.Before(oldest) {
						oldest = s.Time
					}
				}
			}
			if old > 0 {
				r.add(SeverityInfo, "snapshot-old", ref.Target().String(), fmt.Sprintf("%d of %d snapshots older than %d days (oldest %s): they hold storage and slow the disks", old, res.Total, r.th.SnapshotMaxAgeDays, oldest.Format("2006-01-02")), "snapshot_list")
			}
		})
	}
	for _, ref := range configs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			res, err := r.c.GuestConfig(ctx, GuestConfigInput{GuestRef: ref})
			if err != nil {
				r.failed(ctx, "the config of "+ref.Target().String(), err)
				return
			}
			if v, ok := res.Config["agent"]; !ok || !agentEnabled(v) {
				why := "no agent key"
				if ok {
					why = "agent: " + v
				}
				r.add(SeverityWarning, "agent-disabled", ref.Target().String(), "running VM without the QEMU guest agent enabled ("+why+"): no clean shutdown through the agent, no consistent backups, no addresses", "guest_config")
			}
		})
	}
	wg.Wait()
	for what, n := range skipped {
		r.add(SeverityInfo, "not-checked", "cluster", fmt.Sprintf("%d guests not checked for %s: a report reads at most %d (the guest reads setting)", n, map[string]string{"snapshots": "old snapshots", "agent": "the guest agent"}[what], r.th.MaxGuestReads), "health_report")
	}
}

// agentEnabled reads the agent property: "[enabled=]<1|0>[,…]".
func agentEnabled(v string) bool {
	first, _, _ := strings.Cut(v, ",")
	first = strings.TrimPrefix(strings.TrimSpace(first), "enabled=")
	return first == "1" || first == "yes" || first == "on" || first == "true"
}

var findingRank = map[string]int{SeverityCritical: 0, SeverityWarning: 1, SeverityInfo: 2}

func (r *healthRun) result() *HealthReportResult {
	res := &HealthReportResult{Scope: cmp.Or(r.in.Node, "cluster"), Findings: []HealthFinding{}, Nodes: r.nodes, Guests: r.guests}
	if res.Nodes == nil {
		res.Nodes = []string{}
	}
	slices.Sort(res.Nodes)
	minRank := findingRank[cmp.Or(r.in.MinSeverity, SeverityInfo)]
	slices.SortFunc(r.findings, func(a, b HealthFinding) int {
		return cmp.Or(CompareSeverity(a.Severity, b.Severity), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Subject, b.Subject), strings.Compare(a.Evidence, b.Evidence))
	})
	limit := limitOr(r.in.Limit)
	for _, f := range r.findings {
		if findingRank[f.Severity] > minRank {
			continue
		}
		res.Total++
		switch f.Severity {
		case SeverityCritical:
			res.Critical++
		case SeverityWarning:
			res.Warning++
		default:
			res.Info++
		}
		if len(res.Findings) < limit {
			res.Findings = append(res.Findings, f)
		}
	}
	return res
}
