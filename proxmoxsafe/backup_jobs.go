package proxmoxsafe

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpListBackupJobs is the name of [Client.ListBackupJobs].
const OpListBackupJobs Operation = "ListBackupJobs"

// listBackupJobsOp declares [Client.ListBackupJobs]: its first request
// is the backup jobs; it also reads the guests, and on each allowlisted
// node the job runs on, the recent vzdump tasks and the first log line
// of each until every job is matched.
var listBackupJobsOp = operation{info: OperationInfo{
	Name:   OpListBackupJobs,
	Method: "GET",
	Route:  "/cluster/backup",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit", Note: "to read the backup jobs (/cluster/backup)"},
		{Path: pathVMs, Name: "VM.Audit", Note: "guests without it are not resolved"},
		{Path: pathNode, Name: "Sys.Audit",
			Note: "to see the scheduler's tasks (they run as root@pam): without it only the token's own tasks are listed and no scheduled run is found"},
	},
}}

// MaxJobRunScan is how many of a node's newest vzdump tasks
// [Client.ListBackupJobs] looks through for each job's last run; a job
// whose last run is older is reported "not found".
const MaxJobRunScan = 30

// ListBackupJobsInput selects the jobs [Client.ListBackupJobs] reports.
type ListBackupJobsInput struct {
	// ID, when set, reports only that job.
	ID string `json:"id,omitempty" validate:"omitempty,max=50,printascii"`
}

// ListBackupJobsResult is every scheduled backup job with the guests it
// selects and its last result.
type ListBackupJobsResult struct {
	Jobs []BackupJobStatus `json:"jobs"`
	// UncheckedNodes are nodes a job runs on that are not on the
	// allowlist: their task lists are not read.
	UncheckedNodes []string `json:"unchecked_nodes,omitempty"`
}

// BackupJobStatus is a job of /cluster/backup, the guests it selects in
// the whole cluster and its last runs.
type BackupJobStatus struct {
	BackupJob
	// LastResult is the job's newest run's outcome over the nodes
	// checked: "ok", "warnings", "failed" (any node's newest run
	// failed), "running", or "not found" when none of the nodes' recent
	// vzdump tasks is a run of it.
	LastResult string `json:"last_result"`
	// LastRuns is, per node checked, the newest run of the job found.
	LastRuns []BackupJobRun `json:"last_runs"`
}

// BackupJobRun is one vzdump task that ran a job's selection.
type BackupJobRun struct {
	Node string   `json:"node"`
	Task TaskInfo `json:"task"`
	// Scheduled is true when the scheduler ran it (root@pam, with
	// --quiet 1); false for a "Run now" or a manual run of the same
	// selection.
	Scheduled bool `json:"scheduled"`
}

// vzdumpRun is what a vzdump task's first log line says it ran: the
// command line of pve-guest-common VZDump/Common.pm command_line.
type vzdumpRun struct {
	vmids []string
	opts  map[string]string
}

// parseVZDumpLine parses "INFO: starting new backup job: vzdump 100 101
// --storage local --mode snapshot …" (values shell-quoted); false when
// the line is not one.
func parseVZDumpLine(s string) (vzdumpRun, bool) {
	const head = "INFO: starting new backup job: vzdump"
	rest, ok := strings.CutPrefix(s, head)
	if !ok {
		return vzdumpRun{}, false
	}
	words := shellWords(rest)
	run := vzdumpRun{opts: map[string]string{}}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if k, ok := strings.CutPrefix(w, "--"); ok {
			if i+1 < len(words) {
				run.opts[k] = words[i+1]
				i++
			}
			continue
		}
		run.vmids = append(run.vmids, w)
	}
	return run, true
}

// shellWords splits a command line as a shell would for the quoting
// PVE::Tools::shellquote writes: words separated by spaces, single
// quotes taken literally, a quote written as '"'"'.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, any := false, byte(0), false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, any = ch, true
		case ch == ' ' || ch == '\t':
			if in || any {
				out = append(out, cur.String())
				cur.Reset()
			}
			in, any = false, false
			continue
		default:
			cur.WriteByte(ch)
		}
		in = true
	}
	if in || any {
		out = append(out, cur.String())
	}
	return out
}

// runs reports whether a vzdump run is one of the job's: the same
// selection (pool, vmid list, or all with the same exclusions), storage
// and mode. The task records neither the job's id nor its schedule
// (command_line leaves job-id out; the scheduler's state file with the
// run's UPID is node-local, not in the API), so two jobs with the same
// selection, storage and mode cannot be told apart, and a manual run of
// the same selection counts as the job's.
func (j rawBackupJob) runs(r vzdumpRun) bool {
	if string(j.Storage) != r.opts["storage"] || cmpOr(string(j.Mode), "snapshot") != cmpOr(r.opts["mode"], "snapshot") {
		return false
	}
	switch {
	case j.Pool != "":
		return r.opts["pool"] == string(j.Pool)
	case j.VMID != "":
		return r.opts["pool"] == "" && sameIDs(splitIDs(string(j.VMID)), r.vmids)
	case bool(j.All) || j.Exclude != "":
		all := r.opts["all"] == "1" || r.opts["exclude"] != ""
		return all && r.opts["pool"] == "" && len(r.vmids) == 0 && sameIDs(splitIDs(string(j.Exclude)), splitIDs(r.opts["exclude"]))
	}
	return false
}

func sameIDs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ListBackupJobs lists the scheduled backup jobs (GET /cluster/backup):
// schedule, next run, storage, mode, the selection and the guests it
// selects in the whole cluster (as vzdump resolves it), whether enabled,
// and each job's last result. Proxmox does not record a job's runs in
// the API: a run is a vzdump task (user root@pam for the scheduler, UPID
// id the vmid only when one guest is backed up on that node) whose first
// log line is the command line without the job's id. So, on each
// allowlisted node the job runs on, the newest [MaxJobRunScan] vzdump
// tasks are read (GET /nodes/{node}/tasks), newest first, with the first
// line of each log until every job is matched ([rawBackupJob.runs]: the
// same selection, storage and mode). Nodes outside the allowlist are
// named in UncheckedNodes, never read. Only GET requests.
func (c *Client) ListBackupJobs(ctx context.Context, in ListBackupJobsInput) (*ListBackupJobsResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, OpListBackupJobs, start, err)
	}
	var rawJobs []rawBackupJob
	if err := c.get(ctx, "/cluster/backup", nil, &rawJobs); err != nil {
		return nil, c.logged(ctx, OpListBackupJobs, start, err)
	}
	if in.ID != "" {
		rawJobs = slices.DeleteFunc(rawJobs, func(j rawBackupJob) bool { return string(j.ID) != in.ID })
	}
	raw, err := c.vmResources(ctx)
	if err != nil {
		return nil, c.logged(ctx, OpListBackupJobs, start, err)
	}
	var guests []*rawResource
	for i := range raw {
		if r := &raw[i]; r.Type == "qemu" || r.Type == "lxc" {
			guests = append(guests, r)
		}
	}
	slices.SortFunc(guests, func(a, b *rawResource) int { return int(a.VMID - b.VMID) })
	res := &ListBackupJobsResult{Jobs: make([]BackupJobStatus, 0, len(rawJobs))}
	// The nodes each job runs on: those of the guests it selects, every
	// allowlisted node for all (vzdump runs an empty job there too).
	jobNodes := make([][]string, len(rawJobs))
	unchecked := map[string]bool{}
	for i, j := range rawJobs {
		bj := BackupJobStatus{BackupJob: j.status(), LastRuns: []BackupJobRun{}}
		var nodes []string
		for _, g := range guests {
			if j.selects(g) {
				bj.addGuest(int(g.VMID))
				if n := string(g.Node); !slices.Contains(nodes, n) {
					nodes = append(nodes, n)
				}
			}
		}
		if bool(j.All) || j.Exclude != "" {
			for _, n := range c.policy.nodeList {
				if (j.Node == "" || string(j.Node) == n) && !slices.Contains(nodes, n) {
					nodes = append(nodes, n)
				}
			}
		}
		for _, n := range nodes {
			if c.policy.nodes[n] {
				jobNodes[i] = append(jobNodes[i], n)
			} else {
				unchecked[n] = true
			}
		}
		res.Jobs = append(res.Jobs, bj)
	}
	byNode := map[string][]int{}
	for i, nodes := range jobNodes {
		for _, n := range nodes {
			byNode[n] = append(byNode[n], i)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byNode)) {
		runs, err := c.lastJobRuns(ctx, n, rawJobs, byNode[n])
		if err != nil {
			return nil, c.logged(ctx, OpListBackupJobs, start, err)
		}
		for i, r := range runs {
			res.Jobs[i].LastRuns = append(res.Jobs[i].LastRuns, r)
		}
	}
	for i := range res.Jobs {
		res.Jobs[i].LastResult = lastResult(res.Jobs[i].LastRuns)
	}
	res.UncheckedNodes = slices.Sorted(maps.Keys(unchecked))
	c.logged(ctx, OpListBackupJobs, start, nil)
	return res, nil
}

// status is the job as [BackupJob] reports it, sanitized, without guests.
func (j rawBackupJob) status() BackupJob {
	bj := BackupJob{ID: line(string(j.ID), 64), Enabled: j.Enabled == nil || bool(*j.Enabled), Schedule: line(string(j.Schedule), 128),
		Storage: line(string(j.Storage), MaxStorageIDLen), Mode: line(string(j.Mode), 16), Selection: j.selection(), Guests: []int{}}
	if j.NextRun > 0 {
		bj.NextRun = time.Unix(int64(j.NextRun), 0).UTC()
	}
	return bj
}

// lastJobRuns reads node's newest vzdump tasks and, newest first, their
// first log lines until each of the jobs (indexes into jobs) has its
// newest run; it returns them by job index.
func (c *Client) lastJobRuns(ctx context.Context, node string, jobs []rawBackupJob, want []int) (map[int]BackupJobRun, error) {
	q := url.Values{"source": {"all"}, "typefilter": {"vzdump"}, "start": {"0"}, "limit": {strconv.Itoa(MaxJobRunScan)}}
	var raw []rawTaskEntry
	if err := c.get(ctx, pve.Path("nodes", node, "tasks"), q, &raw); err != nil {
		return nil, err
	}
	slices.SortStableFunc(raw, func(a, b rawTaskEntry) int { return int(b.StartTime - a.StartTime) })
	out := map[int]BackupJobRun{}
	for k, t := range raw {
		if k == MaxJobRunScan || len(out) == len(want) {
			break
		}
		if string(t.Type) != "vzdump" {
			continue
		}
		var lines []rawLogLine
		if err := c.get(ctx, pve.Path("nodes", node, "tasks", string(t.UPID), "log"), url.Values{"start": {"0"}, "limit": {"1"}}, &lines); err != nil {
			return nil, err
		}
		if len(lines) == 0 {
			continue
		}
		run, ok := parseVZDumpLine(string(lines[0].T))
		if !ok {
			continue
		}
		for _, i := range want {
			if _, done := out[i]; done || !jobs[i].runs(run) {
				continue
			}
			info := taskInfo(t)
			out[i] = BackupJobRun{Node: node, Task: info, Scheduled: info.User == "root@pam" && run.opts["quiet"] == "1"}
		}
	}
	return out, nil
}

// lastResult sums up a job's newest runs over the nodes.
func lastResult(runs []BackupJobRun) string {
	if len(runs) == 0 {
		return "not found"
	}
	res := "ok"
	for _, r := range runs {
		switch {
		case r.Task.Failed:
			return "failed"
		case r.Task.Status == "running":
			res = "running"
		case res == "ok" && strings.HasPrefix(r.Task.ExitStatus, "WARNINGS"):
			res = "warnings"
		}
	}
	return res
}
