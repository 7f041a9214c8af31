package proxmoxsafe

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpBackupCoverage is the name of [Client.BackupCoverage].
const OpBackupCoverage Operation = "BackupCoverage"

// backupCoverageOp declares [Client.BackupCoverage]: its first request
// is the backup jobs; it also reads the guests, each allowlisted node's
// storages and their backups.
var backupCoverageOp = operation{info: OperationInfo{
	Name:   OpBackupCoverage,
	Method: "GET",
	Route:  "/cluster/backup",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit", Note: "to read the backup jobs (/cluster/backup)"},
		{Path: pathVMs, Name: "VM.Audit", Note: "guests without it are not listed"},
		{Path: pathStorage, Name: "Datastore.Audit",
			Note: "to list the nodes' storages; Proxmox lists a guest's backups only with Datastore.AllocateSpace there and VM.Backup on the guest (see backup_list): without them a guest looks unbacked"},
	},
}}

// DefaultBackupMaxAgeDays is the age after which coverage reports a
// guest's newest backup as too old.
const DefaultBackupMaxAgeDays = 7

// BackupCoverageInput selects what [Client.BackupCoverage] reports.
type BackupCoverageInput struct {
	// MaxAgeDays: a newest backup older than this is a finding; 0 means
	// [DefaultBackupMaxAgeDays].
	MaxAgeDays int `json:"max_age_days,omitempty" validate:"min=0,max=3650" jsonschema:"Default 7."`
	// VMID, when set, reports only that guest.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Limit and Cursor page the guests as list_guests does.
	Limit  int    `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Default 200."`
	Cursor string `json:"cursor,omitempty" validate:"omitempty,max=64,printascii" jsonschema:"The next_cursor of the previous page."`
}

// BackupCoverageResult is the coverage of the guests on allowlisted
// nodes, by VMID, one page, and the backup jobs.
type BackupCoverageResult struct {
	Guests []GuestCoverage `json:"guests"`
	// Total counts the guests that matched, beyond the page too.
	Total      int    `json:"total"`
	NextCursor string `json:"next_cursor,omitempty"`
	// Jobs are the scheduled backup jobs.
	Jobs []BackupJob `json:"jobs"`
	// Unchecked lists guests on nodes outside the allowlist: their
	// backups on node-local storage cannot be read, so they are left out.
	Unchecked int `json:"unchecked,omitempty"`
}

// GuestCoverage is one guest's newest backup, the jobs that select it
// and what is wrong.
type GuestCoverage struct {
	VMID int       `json:"vmid"`
	Type GuestType `json:"type"`
	Node string    `json:"node"`
	Name string    `json:"name,omitempty"`
	// Newest is the newest backup seen on any backup storage the node
	// lists; nil when there is none.
	Newest *BackupInfo `json:"newest,omitempty"`
	// Storage is Newest's storage.
	Storage string `json:"storage,omitempty"`
	// AgeDays is Newest's age in whole days.
	AgeDays int `json:"age_days,omitempty"`
	// Jobs are the ids of the jobs that select the guest (enabled or not).
	Jobs []string `json:"jobs,omitempty"`
	// Findings: "no backup", "newest backup older than N days", "not
	// covered by an enabled job", "last verification failed".
	Findings []string `json:"findings,omitempty"`
}

// BackupJob is one scheduled backup job of /cluster/backup.
type BackupJob struct {
	ID       string `json:"id"`
	Enabled  bool   `json:"enabled"`
	Schedule string `json:"schedule,omitempty"`
	// NextRun is when Proxmox will run it next; zero when not scheduled.
	NextRun time.Time `json:"next_run,omitzero"`
	Storage string    `json:"storage,omitempty"`
	Mode    string    `json:"mode,omitempty"`
	// Selection is how the job selects guests: "all", "pool <id>",
	// "vmid <list>", with " except <list>" and " on <node>".
	Selection string `json:"selection"`
	// Guests are the VMIDs it selects among the guests reported, the
	// lowest [MaxJobGuests] of them; GuestsTotal counts them all.
	Guests      []int `json:"guests"`
	GuestsTotal int   `json:"guests_total"`
}

// maxCoveragePageBytes bounds the JSON of one page of [Client.BackupCoverage]'s
// guests and the backup jobs together, beside Limit, so that an answer
// stays within the 64 KiB every list answer keeps (the rest of it, counts
// and the cursor, is a few dozen bytes). The jobs count first: each lists
// at most [MaxJobGuests] VMIDs, and a page holds at least one guest.
const maxCoveragePageBytes = 56 << 10

// jsonSize is the length of v's JSON encoding (0 if it has none).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// MaxJobGuests bounds the VMIDs a [BackupJob] lists: a job that selects
// every guest of a large cluster would list each of them (10,000 VMIDs are
// about 60 KB), in an answer that has to fit a model's context. Which job
// covers a given guest is in that guest's coverage (GuestCoverage.Jobs).
const MaxJobGuests = 200

// addGuest counts a guest the job selects and lists it while there is room.
func (bj *BackupJob) addGuest(vmid int) {
	bj.GuestsTotal++
	if len(bj.Guests) < MaxJobGuests {
		bj.Guests = append(bj.Guests, vmid)
	}
}

type rawBackupJob struct {
	ID       pve.String `json:"id"`
	Enabled  *pve.Bool  `json:"enabled"`
	Schedule pve.String `json:"schedule"`
	NextRun  pve.Int    `json:"next-run"`
	Storage  pve.String `json:"storage"`
	Mode     pve.String `json:"mode"`
	All      pve.Bool   `json:"all"`
	VMID     pve.String `json:"vmid"`
	Exclude  pve.String `json:"exclude"`
	Pool     pve.String `json:"pool"`
	Node     pve.String `json:"node"`
}

// selects reports whether the job selects a guest (mgr VZDump.pm
// get_included_guests: vmid list, all with exclusions, or a pool; node
// limits it to guests on that node).
func (j rawBackupJob) selects(r *rawResource) bool {
	id := strconv.Itoa(int(r.VMID))
	if j.Node != "" && string(j.Node) != string(r.Node) {
		return false
	}
	// A pool wins over the rest (exclude does not apply to it), then
	// the vmid list, then all (which exclude implies).
	switch {
	case j.Pool != "":
		return string(j.Pool) == string(r.Pool)
	case j.VMID != "":
		return slices.Contains(splitIDs(string(j.VMID)), id)
	case bool(j.All) || j.Exclude != "":
		return !slices.Contains(splitIDs(string(j.Exclude)), id)
	}
	return false
}

func (j rawBackupJob) selection() string {
	var s string
	switch {
	case j.Pool != "":
		s = "pool " + line(string(j.Pool), MaxPoolIDLen)
	case j.VMID != "":
		s = "vmid " + line(string(j.VMID), 256)
	case bool(j.All) || j.Exclude != "":
		s = "all"
		if j.Exclude != "" {
			s += " except " + line(string(j.Exclude), 256)
		}
	default:
		s = "none"
	}
	if j.Node != "" {
		s += " on " + line(string(j.Node), MaxNodeLen)
	}
	return s
}

func splitIDs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
}

// BackupCoverage reports, for every guest on an allowlisted node (or
// in.VMID), its newest backup on the backup storages the node lists, the
// backup jobs that select it, and the findings: no backup at all, a
// newest backup older than in.MaxAgeDays, not selected by an enabled job
// (Proxmox's backup-info/not-backed-up counts disabled jobs as covering),
// a failed PBS verification. Guests on other nodes are counted in
// Unchecked, never read. Paged by VMID like [Client.ListGuests].
func (c *Client) BackupCoverage(ctx context.Context, in BackupCoverageInput) (*BackupCoverageResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, OpBackupCoverage, start, err)
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, c.logged(ctx, OpBackupCoverage, start, err)
	}
	var rawJobs []rawBackupJob
	if err := c.get(ctx, "/cluster/backup", nil, &rawJobs); err != nil {
		return nil, c.logged(ctx, OpBackupCoverage, start, err)
	}
	raw, err := c.vmResources(ctx)
	if err != nil {
		return nil, c.logged(ctx, OpBackupCoverage, start, err)
	}
	res := &BackupCoverageResult{Guests: []GuestCoverage{}, Jobs: make([]BackupJob, 0, len(rawJobs))}
	var guests []*rawResource
	for i := range raw {
		r := &raw[i]
		if (r.Type != "qemu" && r.Type != "lxc") || (in.VMID != 0 && int(r.VMID) != in.VMID) {
			continue
		}
		if !c.policy.nodes[string(r.Node)] {
			res.Unchecked++
			continue
		}
		guests = append(guests, r)
	}
	slices.SortFunc(guests, func(a, b *rawResource) int { return int(a.VMID - b.VMID) })
	for _, j := range rawJobs {
		bj := j.status()
		for _, g := range guests {
			if j.selects(g) {
				bj.addGuest(int(g.VMID))
			}
		}
		res.Jobs = append(res.Jobs, bj)
	}
	newest, err := c.newestBackups(ctx, guests)
	if err != nil {
		return nil, c.logged(ctx, OpBackupCoverage, start, err)
	}
	maxAge := in.MaxAgeDays
	if maxAge == 0 {
		maxAge = DefaultBackupMaxAgeDays
	}
	res.Total = len(guests)
	limit := limitOr(in.Limit)
	pageBytes := jsonSize(res.Jobs)
	for _, g := range guests {
		if int64(g.VMID) <= after {
			continue
		}
		if len(res.Guests) == limit {
			res.NextCursor = encodeCursor(res.Guests[len(res.Guests)-1].VMID)
			break
		}
		gc := GuestCoverage{VMID: int(g.VMID), Type: GuestType(g.Type), Node: line(string(g.Node), MaxNodeLen), Name: line(string(g.Name), maxNameLen)}
		enabled := false
		for i, j := range rawJobs {
			if j.selects(g) {
				gc.Jobs = append(gc.Jobs, res.Jobs[i].ID)
				enabled = enabled || res.Jobs[i].Enabled
			}
		}
		if nb, ok := newest[int(g.VMID)]; ok {
			b := nb.b
			gc.Newest, gc.Storage = &b, nb.storage
			gc.AgeDays = int(start.Sub(b.Time).Hours() / 24)
			if gc.AgeDays >= maxAge {
				gc.Findings = append(gc.Findings, "newest backup older than "+strconv.Itoa(maxAge)+" days")
			}
			if b.Verification == "failed" {
				gc.Findings = append(gc.Findings, "last verification failed")
			}
		} else {
			gc.Findings = append(gc.Findings, "no backup")
		}
		if !enabled {
			gc.Findings = append(gc.Findings, "not covered by an enabled job")
		}
		// A page also ends before maxCoveragePageBytes with the jobs: a
		// guest with its newest backup (notes included) takes several
		// times what a list_guests row does.
		size := jsonSize(gc)
		if len(res.Guests) > 0 && pageBytes+size > maxCoveragePageBytes {
			res.NextCursor = encodeCursor(res.Guests[len(res.Guests)-1].VMID)
			break
		}
		pageBytes += size
		res.Guests = append(res.Guests, gc)
	}
	c.logged(ctx, OpBackupCoverage, start, nil)
	return res, nil
}

type storedBackup struct {
	b       BackupInfo
	storage string
}

// newestBackups reads, on each node the guests are on, the storages with
// content backup and their backups (a shared storage once), and returns
// each guest's newest.
func (c *Client) newestBackups(ctx context.Context, guests []*rawResource) (map[int]storedBackup, error) {
	out := map[int]storedBackup{}
	var nodes []string
	for _, g := range guests {
		if n := string(g.Node); !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	sharedSeen := map[string]bool{}
	for _, n := range nodes {
		list, err := c.nodeStorages(ctx, n)
		if err != nil {
			return nil, err
		}
		for _, st := range list {
			if !st.enabled || !st.active || !slices.Contains(st.content, "backup") || (st.shared && sharedSeen[st.id]) {
				continue
			}
			sharedSeen[st.id] = st.shared
			res, err := c.ListBackups(ctx, ListBackupsInput{Node: n, Storage: st.id, Limit: MaxListLimit})
			if err != nil {
				return nil, err
			}
			for _, b := range res.Backups {
				if cur, ok := out[b.VMID]; !ok || b.Time.After(cur.b.Time) {
					out[b.VMID] = storedBackup{b: b, storage: st.id}
				}
			}
		}
	}
	return out, nil
}
