package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Reads across the fleet. A read whose tool is in fleetReads takes, besides
// one cluster's name, "*" (every cluster that offers it) or a list of names
// as its cluster. The clusters are read at once (fleetEach: at most
// fleetReadConcurrency, each bounded by fleetReadTimeout), so the call
// takes about as long as the slowest cluster, not the sum; a cluster that
// cannot be read is reported inline in "clusters" and the others are still
// answered. The answer is bounded as one cluster's is (limit, default 200),
// whatever the number of clusters.
//
// They are the reads whose question spans clusters: which guests there
// are (list_guests), is anything wrong anywhere (health_report), which
// storage is filling up (storage_list), which guests lack a recent backup
// (backup_coverage). Reads about one node, storage, guest or task name
// things of one cluster, so they keep taking one (docs/CLUSTERS.md).

// fleetReads are the tools a fleet reads across several clusters.
var fleetReads = map[string]*fleetRead{
	ToolListGuests:     fleetReadOf(ToolListGuests, fleetListGuests),
	ToolHealthReport:   fleetReadOf(ToolHealthReport, fleetHealthReport),
	ToolStorageList:    fleetReadOf(ToolStorageList, fleetStorageList),
	ToolBackupCoverage: fleetReadOf(ToolBackupCoverage, fleetBackupCoverage),
}

// fleetRead is one tool's read across clusters.
type fleetRead struct {
	// run reads targets (in fleet order) with the arguments rest (without
	// cluster), checked against the tool's input schema in.
	run func(ctx context.Context, targets []*adapter, rest json.RawMessage, in func() (*jsonschema.Resolved, error)) (*mcp.CallToolResult, error)
	// result infers the schema of the fleet's result, which the tool's
	// output schema takes in beside one cluster's (mergeSchemas).
	result func() *jsonschema.Schema
}

// fleetReadOf declares a fleet read: read gets the tool's own input (one
// cluster's, decoded and checked as one cluster's call is) and returns the
// summary and the result. An error refuses the whole call; a cluster that
// fails is reported in the result instead.
func fleetReadOf[In, Out any](tool string, read func(ctx context.Context, targets []*adapter, in In) (string, *Out, error)) *fleetRead {
	return &fleetRead{
		run: func(ctx context.Context, targets []*adapter, rest json.RawMessage, schema func() (*jsonschema.Resolved, error)) (*mcp.CallToolResult, error) {
			var res mcp.CallToolResult
			in, err := decodeArguments[In](rest, schema)
			if err != nil {
				res.SetError(err)
				return &res, nil
			}
			text, out, err := read(ctx, targets, in)
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			if err != nil {
				res.SetError(toolError(ctx, tool, err))
				return &res, nil
			}
			return structuredResult(text, out), nil
		},
		result: func() *jsonschema.Schema {
			_, out := schemasFor[In, *Out]()
			return out
		},
	}
}

// checkFleetResult checks a fleet read's result as addServed checks every
// tool's when the tests turn the checks on: against the output schema the
// tool advertises, and its text against its structured content.
func checkFleetResult(res *mcp.CallToolResult, out func() (*jsonschema.Resolved, error)) error {
	if res == nil || res.IsError {
		return nil
	}
	if validateOutputs && res.StructuredContent != nil {
		if err := validateOutput(res.StructuredContent, out); err != nil {
			return fmt.Errorf("validating tool output: %w", err)
		}
	}
	if checkText != nil {
		if err := checkText(res); err != nil {
			return fmt.Errorf("checking the text content: %w", err)
		}
	}
	return nil
}

// FleetReadStatus is how one cluster of a fleet read answered.
type FleetReadStatus struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// Total counts what matched there, beyond the page too.
	Total int `json:"total"`
}

// fleetGather reads every target at once (fleetEach) and returns each
// one's answer and its status: reachable, or why not.
func fleetGather[R any](ctx context.Context, targets []*adapter, read func(ctx context.Context, i int, a *adapter) (R, error)) ([]R, []FleetReadStatus) {
	out := make([]R, len(targets))
	errs := make([]error, len(targets))
	clients := make([]*proxmoxsafe.Client, len(targets))
	for i, a := range targets {
		clients[i] = a.client
	}
	fleetEach(ctx, clients, func(ctx context.Context, i int, _ *proxmoxsafe.Client) {
		out[i], errs[i] = read(ctx, i, targets[i])
	})
	statuses := make([]FleetReadStatus, len(targets))
	for i, a := range targets {
		statuses[i] = FleetReadStatus{Name: a.client.Cluster().Name, Reachable: errs[i] == nil}
		if errs[i] != nil {
			statuses[i].Error = clusterError(errs[i])
		}
	}
	return out, statuses
}

// fleetSummary is the part of a fleet read's summary every one has: the
// clusters answered, those that could not be read, and the next page.
func fleetSummary(head string, statuses []FleetReadStatus, next string) string {
	var down []string
	for _, st := range statuses {
		if !st.Reachable {
			down = append(down, st.Name)
		}
	}
	text := head + " on " + clusters(len(statuses)-len(down))
	if len(down) > 0 {
		text += fmt.Sprintf("; %d unreachable: %s", len(down), strings.Join(down, ", "))
	}
	if next != "" {
		text += fmt.Sprintf("; more with cursor %q", next)
	}
	return text
}

func clusters(n int) string {
	if n == 1 {
		return "1 cluster"
	}
	return strconv.Itoa(n) + " clusters"
}

// notAcross refuses a node given to a read over several clusters: a node
// is one cluster's (two clusters may both have pve1), so such a call names
// that cluster alone.
func notAcross(node string) error {
	if node == "" {
		return nil
	}
	return &proxmoxsafe.ValidationError{Fields: []proxmoxsafe.FieldError{{Field: "node",
		Problem: "is one cluster's: with node, name that cluster alone as cluster; nothing was read"}}}
}

// Paged reads (list_guests, backup_coverage): items are ordered by cluster
// (in the order configured), then by VMID, and next_cursor continues after
// the last item listed, whichever cluster it is on. Every selected cluster
// is read on every page, so the totals and the reachability stay current.
// A page ends at limit items or at fleetPageBytes of structured content,
// whichever comes first: the bound every list answer keeps holds however
// large each cluster's items are (a guest's backup coverage is ~350 B, so
// 200 of them would not fit).

// fleetPageBytes bounds a fleet page's structured content; its text (the
// compact form of the same data) is smaller.
const fleetPageBytes = 64 << 10

// fleetCursor is "f1:<cluster>:<vmid>" (base64url): continue after that
// VMID of that cluster.
const fleetCursorPrefix = "f1:"

func encodeFleetCursor(cluster string, vmid int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(fleetCursorPrefix + cluster + ":" + strconv.Itoa(vmid)))
}

func decodeFleetCursor(s string, targets []*adapter) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	bad := &proxmoxsafe.ValidationError{Fields: []proxmoxsafe.FieldError{{Field: "cursor", Problem: "is not a cursor returned by a previous call over these clusters"}}}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, 0, bad
	}
	rest, ok := strings.CutPrefix(string(b), fleetCursorPrefix)
	name, num, ok2 := strings.Cut(rest, ":")
	vmid, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || vmid < 100 {
		return 0, 0, bad
	}
	i := slices.IndexFunc(targets, func(a *adapter) bool { return a.client.Cluster().Name == name })
	if i < 0 {
		return 0, 0, bad
	}
	return i, vmid, nil
}

// clusterPage is one cluster's page of a paged fleet read.
type clusterPage[T any] struct {
	items []T
	total int
	more  bool // the cluster has items after these
}

// fleetPage is a page across clusters: items, each with the index of its
// cluster among the targets.
type fleetPage[T any] struct {
	items    []T
	from     []int
	total    int
	statuses []FleetReadStatus
	next     string
}

// fleetPaged reads one page of at most limit items across targets, after
// cursor (a fleet cursor): read returns one cluster's page after its own
// cursor ("" for its first). vmid names an item for the next cursor.
func fleetPaged[T any](ctx context.Context, targets []*adapter, cursor string, limit int, vmid func(T) int,
	read func(ctx context.Context, i int, a *adapter, cursor string) (clusterPage[T], error)) (*fleetPage[T], error) {
	from, after, err := decodeFleetCursor(cursor, targets)
	if err != nil {
		return nil, err
	}
	limit = cmp.Or(limit, proxmoxsafe.DefaultListLimit)
	pages, statuses := fleetGather(ctx, targets, func(ctx context.Context, i int, a *adapter) (clusterPage[T], error) {
		own := ""
		if i == from && after > 0 {
			own = proxmoxsafe.GuestsCursorAfter(after)
		}
		return read(ctx, i, a, own)
	})
	p := &fleetPage[T]{statuses: statuses}
	// What the page holds beside its items (the statuses, whose totals
	// and per-cluster fields are a few bytes each, the other members,
	// the cursor) is well within the 4 KiB kept for it.
	size, _ := json.Marshal(statuses)
	budget := fleetPageBytes - 4<<10 - len(size)
	more, full := false, false
	for i := range targets {
		if !statuses[i].Reachable {
			continue
		}
		statuses[i].Total = pages[i].total
		p.total += pages[i].total
		if i < from {
			continue
		}
		named := len(`"cluster":,`) + len(strconv.Quote(statuses[i].Name)) + 1 // the item's cluster member and its comma in the list
		for _, it := range pages[i].items {
			if full {
				more = true
				break
			}
			b, err := json.Marshal(it)
			if err != nil {
				return nil, err
			}
			if len(p.items) == limit || (len(p.items) > 0 && len(b)+named > budget) {
				full, more = true, true
				break
			}
			budget -= len(b) + named
			p.items, p.from = append(p.items, it), append(p.from, i)
		}
		if pages[i].more && (full || len(p.items) == limit) {
			more = true // this cluster has more; a later one with items sets it above
		}
	}
	if more && len(p.items) > 0 {
		last := len(p.items) - 1
		p.next = encodeFleetCursor(statuses[p.from[last]].Name, vmid(p.items[last]))
	}
	return p, nil
}

// FleetGuest is a guest of a fleet listing: the cluster it is on, then the
// guest as list_guests lists it.
type FleetGuest struct {
	Cluster string `json:"cluster"`
	proxmoxsafe.Guest
}

// FleetGuestsResult is list_guests over several clusters.
type FleetGuestsResult struct {
	Guests []FleetGuest `json:"guests"`
	// Total counts every guest that matched on the clusters read.
	Total      int               `json:"total"`
	NextCursor string            `json:"next_cursor,omitempty"`
	Clusters   []FleetReadStatus `json:"clusters"`
}

func fleetListGuests(ctx context.Context, targets []*adapter, in proxmoxsafe.ListGuestsInput) (string, *FleetGuestsResult, error) {
	p, err := fleetPaged(ctx, targets, in.Cursor, in.Limit, func(g proxmoxsafe.Guest) int { return g.VMID },
		func(ctx context.Context, _ int, a *adapter, cursor string) (clusterPage[proxmoxsafe.Guest], error) {
			one := in
			one.Cursor = cursor
			_, res, err := a.listGuests(ctx, one)
			if err != nil {
				return clusterPage[proxmoxsafe.Guest]{}, err
			}
			return clusterPage[proxmoxsafe.Guest]{items: res.Guests, total: res.Total, more: res.NextCursor != ""}, nil
		})
	if err != nil {
		return "", nil, err
	}
	out := &FleetGuestsResult{Guests: make([]FleetGuest, len(p.items)), Total: p.total, NextCursor: p.next, Clusters: p.statuses}
	for i, g := range p.items {
		out.Guests[i] = FleetGuest{Cluster: p.statuses[p.from[i]].Name, Guest: g}
	}
	return fleetSummary(fmt.Sprintf("Listed %d of %d guests", len(out.Guests), out.Total), out.Clusters, out.NextCursor), out, nil
}

// FleetGuestCoverage is a guest of backup_coverage over several clusters:
// its cluster, then its coverage as on one cluster.
type FleetGuestCoverage struct {
	Cluster string `json:"cluster"`
	proxmoxsafe.GuestCoverage
}

// FleetCoverageStatus is one cluster of backup_coverage over several.
type FleetCoverageStatus struct {
	FleetReadStatus
	// Unchecked counts the guests on nodes outside that cluster's
	// allowlist, not reported.
	Unchecked int `json:"unchecked,omitempty"`
}

// FleetCoverageResult is backup_coverage over several clusters. Each
// cluster's backup jobs are backup_jobs' (one cluster): a job lists every
// guest it selects, which across clusters would not fit any bound.
type FleetCoverageResult struct {
	Guests []FleetGuestCoverage `json:"guests"`
	// Total counts the guests that matched on the clusters read.
	Total      int                   `json:"total"`
	NextCursor string                `json:"next_cursor,omitempty"`
	Clusters   []FleetCoverageStatus `json:"clusters"`
}

func fleetBackupCoverage(ctx context.Context, targets []*adapter, in proxmoxsafe.BackupCoverageInput) (string, *FleetCoverageResult, error) {
	unchecked := make([]int, len(targets))
	p, err := fleetPaged(ctx, targets, in.Cursor, in.Limit, func(g proxmoxsafe.GuestCoverage) int { return g.VMID },
		func(ctx context.Context, i int, a *adapter, cursor string) (clusterPage[proxmoxsafe.GuestCoverage], error) {
			one := in
			one.Cursor = cursor
			res, err := a.client.BackupCoverage(ctx, one)
			if err != nil {
				return clusterPage[proxmoxsafe.GuestCoverage]{}, err
			}
			unchecked[i] = res.Unchecked
			return clusterPage[proxmoxsafe.GuestCoverage]{items: res.Guests, total: res.Total, more: res.NextCursor != ""}, nil
		})
	if err != nil {
		return "", nil, err
	}
	out := &FleetCoverageResult{Guests: make([]FleetGuestCoverage, len(p.items)), Total: p.total, NextCursor: p.next,
		Clusters: make([]FleetCoverageStatus, len(p.statuses))}
	for i, st := range p.statuses {
		out.Clusters[i] = FleetCoverageStatus{FleetReadStatus: st, Unchecked: unchecked[i]}
	}
	bad := 0
	for i, g := range p.items {
		out.Guests[i] = FleetGuestCoverage{Cluster: p.statuses[p.from[i]].Name, GuestCoverage: g}
		if len(g.Findings) > 0 {
			bad++
		}
	}
	head := fmt.Sprintf("Backup coverage of %d of %d guests: %d with findings", len(out.Guests), out.Total, bad)
	return fleetSummary(head, p.statuses, out.NextCursor), out, nil
}

// FleetFinding is a finding of health_report over several clusters: its
// cluster, then the finding as on one cluster.
type FleetFinding struct {
	Cluster string `json:"cluster"`
	proxmoxsafe.HealthFinding
}

// FleetHealthStatus is one cluster of health_report over several: its
// reachability and its counts by severity.
type FleetHealthStatus struct {
	FleetReadStatus
	Critical int `json:"critical"`
	Warning  int `json:"warning"`
	Info     int `json:"info"`
}

// FleetHealthResult is health_report over several clusters.
type FleetHealthResult struct {
	// Findings are the most severe first, whichever cluster they are on
	// (then in cluster order, then as the cluster orders them); Total
	// counts them all.
	Findings []FleetFinding      `json:"findings"`
	Total    int                 `json:"total"`
	Critical int                 `json:"critical"`
	Warning  int                 `json:"warning"`
	Info     int                 `json:"info"`
	Clusters []FleetHealthStatus `json:"clusters"`
}

func fleetHealthReport(ctx context.Context, targets []*adapter, in proxmoxsafe.HealthReportInput) (string, *FleetHealthResult, error) {
	if err := notAcross(in.Node); err != nil {
		return "", nil, err
	}
	reports, statuses := fleetGather(ctx, targets, func(ctx context.Context, _ int, a *adapter) (*proxmoxsafe.HealthReportResult, error) {
		// A health report does not fail on a cluster it cannot reach: each
		// check becomes a "not checked" finding. Across clusters such a
		// cluster is unreachable, so it is also asked whether it answers
		// at all (GET /version: any valid token may), beside the report
		// rather than before it, which would add a round trip to every
		// call; when it does not, the report is cancelled and left out.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var probe error
		var wg sync.WaitGroup
		wg.Go(func() {
			if _, probe = a.client.Version(ctx); probe != nil {
				cancel()
			}
		})
		r, err := a.client.HealthReport(ctx, in)
		wg.Wait()
		if probe != nil {
			return nil, probe
		}
		return r, err
	})
	// Each cluster returned its most severe findings up to limit, so the
	// most severe across clusters are among them.
	limit := cmp.Or(in.Limit, proxmoxsafe.DefaultListLimit)
	out := &FleetHealthResult{Findings: []FleetFinding{}, Clusters: make([]FleetHealthStatus, len(targets))}
	for i, r := range reports {
		st := FleetHealthStatus{FleetReadStatus: statuses[i]}
		if st.Reachable {
			st.Total, st.Critical, st.Warning, st.Info = r.Total, r.Critical, r.Warning, r.Info
			out.Total, out.Critical, out.Warning, out.Info = out.Total+r.Total, out.Critical+r.Critical, out.Warning+r.Warning, out.Info+r.Info
			for _, f := range r.Findings {
				out.Findings = append(out.Findings, FleetFinding{Cluster: st.Name, HealthFinding: f})
			}
		}
		statuses[i] = st.FleetReadStatus
		out.Clusters[i] = st
	}
	slices.SortStableFunc(out.Findings, func(a, b FleetFinding) int { return proxmoxsafe.CompareSeverity(a.Severity, b.Severity) })
	out.Findings = out.Findings[:min(len(out.Findings), limit)]
	text := fleetSummary(fmt.Sprintf("Health: %d critical, %d warning, %d info", out.Critical, out.Warning, out.Info), statuses, "")
	if len(out.Findings) < out.Total {
		text += fmt.Sprintf(" (%d of %d shown)", len(out.Findings), out.Total)
	}
	if len(out.Findings) > 0 && out.Findings[0].Severity != proxmoxsafe.SeverityInfo {
		f := out.Findings[0]
		text += fmt.Sprintf("; first: [%s] %s %s", f.Cluster, clean(f.Kind, 32), clean(f.Subject, 96))
	}
	return text, out, nil
}

// FleetStorage is a storage of storage_list over several clusters: its
// cluster, then the storage as on one cluster.
type FleetStorage struct {
	Cluster string `json:"cluster"`
	proxmoxsafe.StorageInfo
}

// FleetStorageResult is storage_list over several clusters.
type FleetStorageResult struct {
	// Storages are the fullest first (used of total; those without a size
	// last), whichever cluster they are on; Total counts them all.
	Storages []FleetStorage    `json:"storages"`
	Total    int               `json:"total"`
	Clusters []FleetReadStatus `json:"clusters"`
}

func fleetStorageList(ctx context.Context, targets []*adapter, in proxmoxsafe.ListStorageInput) (string, *FleetStorageResult, error) {
	if err := notAcross(in.Node); err != nil {
		return "", nil, err
	}
	// Fullest first is the question across clusters ("which storage is
	// filling up?"): so every cluster's entries are read (up to the most
	// one cluster lists) and the page cut after they are ordered, not the
	// first clusters' entries listed and the last ones' left out.
	lists, statuses := fleetGather(ctx, targets, func(ctx context.Context, _ int, a *adapter) (*proxmoxsafe.ListStorageResult, error) {
		return a.client.ListStorage(ctx, proxmoxsafe.ListStorageInput{Limit: proxmoxsafe.MaxListLimit})
	})
	out := &FleetStorageResult{Storages: []FleetStorage{}, Clusters: statuses}
	for i, l := range lists {
		if !statuses[i].Reachable {
			continue
		}
		statuses[i].Total = l.Total
		out.Total += l.Total
		for _, s := range l.Storages {
			out.Storages = append(out.Storages, FleetStorage{Cluster: statuses[i].Name, StorageInfo: s})
		}
	}
	slices.SortStableFunc(out.Storages, func(a, b FleetStorage) int { return cmp.Compare(fullness(b.StorageInfo), fullness(a.StorageInfo)) })
	out.Storages = out.Storages[:min(len(out.Storages), cmp.Or(in.Limit, proxmoxsafe.DefaultListLimit))]
	text := fleetSummary(fmt.Sprintf("Listed %d of %d storage entries, fullest first", len(out.Storages), out.Total), statuses, "")
	if len(out.Storages) > 0 && out.Storages[0].Total > 0 {
		s := out.Storages[0]
		text += fmt.Sprintf("; fullest: [%s] %s on %s, %.0f%% used", s.Cluster, clean(s.Storage, 64), clean(s.Node, 64), fullness(s.StorageInfo)*100)
	}
	return text, out, nil
}

// fullness is the share of a storage used, -1 for one without a size.
func fullness(s proxmoxsafe.StorageInfo) float64 {
	if s.Total == 0 {
		return -1
	}
	return float64(s.Used) / float64(s.Total)
}

// mergeSchemas returns a schema that every value of a and of b passes, for
// a tool whose result is one cluster's or the fleet's: objects have the
// properties of both (required: those both require), arrays the merge of
// their items, and anything else the two differ in is anyOf both.
func mergeSchemas(a, b *jsonschema.Schema) *jsonschema.Schema {
	if a == nil || b == nil {
		return cmp.Or(a, b)
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA == nil && errB == nil && bytes.Equal(ja, jb) {
		return a
	}
	m := *a
	switch {
	case a.Type == "object" && b.Type == "object":
		m.Properties = make(map[string]*jsonschema.Schema, len(a.Properties)+len(b.Properties))
		for name, p := range a.Properties {
			m.Properties[name] = p
		}
		m.PropertyOrder = slices.Clone(a.PropertyOrder)
		order := b.PropertyOrder
		if len(order) == 0 {
			for name := range b.Properties {
				order = append(order, name)
			}
			slices.Sort(order)
		}
		for _, name := range order {
			if p, ok := a.Properties[name]; ok {
				m.Properties[name] = mergeSchemas(p, b.Properties[name])
				continue
			}
			m.Properties[name] = b.Properties[name]
			if len(m.PropertyOrder) > 0 {
				m.PropertyOrder = append(m.PropertyOrder, name)
			}
		}
		m.Required = nil
		for _, r := range a.Required {
			if slices.Contains(b.Required, r) {
				m.Required = append(m.Required, r)
			}
		}
		if a.AdditionalProperties == nil || b.AdditionalProperties == nil {
			m.AdditionalProperties = nil
		}
		return &m
	case a.Type == "array" && b.Type == "array":
		m.Items = mergeSchemas(a.Items, b.Items)
		return &m
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{a, b}}
}

// withFleetResult merges the schema of a fleet read's result into the
// tool's served output schema out (withClusterResult's), as served:
// without descriptions.
func withFleetResult(out json.RawMessage, fleet *jsonschema.Schema) json.RawMessage {
	var s jsonschema.Schema
	if err := json.Unmarshal(out, &s); err != nil {
		panic(fmt.Sprintf("mcpserver: decoding an output schema: %v", err)) // a programmer error: the schemas are ours
	}
	s.PropertyOrder = propertyOrder(out)
	withoutDescriptions(fleet)
	return mustMarshal(mergeSchemas(&s, fleet))
}
