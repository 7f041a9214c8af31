package proxmoxsafe_test

import (
	"slices"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestListBackupJobs: each job's guests in the whole cluster and its last
// result, found by matching the first log line of the nodes' newest
// vzdump tasks (the task names no job): the scheduler's runs
// (root@pam, --quiet 1), a failed run on one node failing the job, a
// "Run now" of the same selection counting, a job never run "not found",
// a node outside the allowlist unchecked; only GETs.
func TestListBackupJobs(t *testing.T) {
	t.Parallel()
	c := infraCluster()
	now := time.Now().Unix()
	c.BackupJobs = []*proxmoxtest.BackupJob{
		{ID: "nightly", Schedule: "21:00", Storage: "local", Mode: "snapshot", VMIDs: "100,101", NextRun: now + 3600},
		{ID: "weekly", Schedule: "sun 01:00", Storage: "nfs-backup", All: true, Exclude: "100,101"},
		{ID: "never", Disabled: true, Schedule: "sat 01:00", Storage: "local", Mode: "stop", VMIDs: "102"},
	}
	e := newEnvWith(t, c, nil)
	// The scheduler's nightly run on pve1 (both guests there), an older
	// failed one, and a manual vzdump of 100 alone (not the job's).
	e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", StartTime: now - 86400, ExitStatus: "job errors",
		Log: []string{"INFO: starting new backup job: vzdump 100 101 --mode snapshot --quiet 1 --storage local --mailnotification always"}})
	ok := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", StartTime: now - 3600, ExitStatus: "OK",
		Log: []string{"INFO: starting new backup job: vzdump 101 100 --storage local --quiet 1 --mode snapshot"}})
	e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "100", User: "automation@pve!mcp", StartTime: now - 60, ExitStatus: "OK",
		Log: []string{"INFO: starting new backup job: vzdump 100 --storage local --mode snapshot --remove 0"}})
	// weekly: OK on pve1, failed on pve2; the pve2 one a "Run now" by a person.
	e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", StartTime: now - 7200, ExitStatus: "OK",
		Log: []string{"INFO: starting new backup job: vzdump --all 1 --exclude '100,101' --storage nfs-backup --quiet 1"}})
	failed := e.fake.AddTask(proxmoxtest.Task{Node: "pve2", Type: "vzdump", User: "alice@pve", StartTime: now - 7000, ExitStatus: "job errors",
		Log: []string{"INFO: starting new backup job: vzdump --exclude 100,101 --all 1 --storage nfs-backup"}})
	res, err := e.client.ListBackupJobs(t.Context(), proxmoxsafe.ListBackupJobsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nonGET(e)) != 0 {
		t.Errorf("non-GET requests: %v", nonGET(e))
	}
	if len(res.Jobs) != 3 {
		t.Fatalf("jobs = %+v", res.Jobs)
	}
	nightly, weekly, never := res.Jobs[0], res.Jobs[1], res.Jobs[2]
	if nightly.LastResult != "ok" || len(nightly.LastRuns) != 1 || nightly.LastRuns[0].Task.UPID != ok.UPID || !nightly.LastRuns[0].Scheduled ||
		!slices.Equal(nightly.Guests, []int{100, 101}) {
		t.Errorf("nightly = %+v", nightly)
	}
	if weekly.LastResult != "failed" || len(weekly.LastRuns) != 2 || weekly.LastRuns[1].Task.UPID != failed.UPID || weekly.LastRuns[1].Scheduled {
		t.Errorf("weekly = %+v", weekly)
	}
	if slices.Contains(weekly.Guests, 100) || !slices.Contains(weekly.Guests, 300) {
		t.Errorf("weekly guests = %v, want all but 100 and 101, pve3's too", weekly.Guests)
	}
	if never.LastResult != "not found" || len(never.LastRuns) != 0 || never.Enabled {
		t.Errorf("never = %+v", never)
	}
	if !slices.Equal(res.UncheckedNodes, []string{"pve3"}) {
		t.Errorf("unchecked = %v, want pve3 (weekly selects its guest 300)", res.UncheckedNodes)
	}
	one, err := e.client.ListBackupJobs(t.Context(), proxmoxsafe.ListBackupJobsInput{ID: "never"})
	if err != nil || len(one.Jobs) != 1 || one.Jobs[0].ID != "never" {
		t.Errorf("id filter = %+v, %v", one, err)
	}
}

// TestListBackupJobsInvalidID: a job id with a control character is refused before
// any request.
func TestListBackupJobsInvalidID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	_, err := e.client.ListBackupJobs(t.Context(), proxmoxsafe.ListBackupJobsInput{ID: "a\x1bb"})
	if err == nil || len(e.requests()) != 0 {
		t.Errorf("err = %v, requests = %v", err, reqLines(e.requests()))
	}
}
