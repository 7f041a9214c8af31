package proxmoxsafe_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestBackupCoverage: newest backup per guest over every backup storage
// of the allowlisted nodes; findings for no backup, too old, and no
// enabled job (a disabled job still "covers" in Proxmox's own report);
// guests on other nodes counted as unchecked; only GETs; paged.
func TestBackupCoverage(t *testing.T) {
	t.Parallel()
	c := infraCluster()
	now := time.Now().Unix()
	c.Storages[0].Backups = append(c.Storages[0].Backups, &proxmoxtest.Backup{VMID: 101, Type: "qemu", Node: "pve1", CTime: now - 3600, Size: 1 << 30})
	c.BackupJobs = []*proxmoxtest.BackupJob{
		{ID: "backup-nightly", Schedule: "21:00", Storage: "local", Mode: "snapshot", VMIDs: "100,101", NextRun: now + 3600},
		{ID: "backup-old", Disabled: true, Schedule: "sun 01:00", Storage: "local", All: true, Exclude: "100,101"},
		// vzdump takes a pool before anything else: exclude does not
		// apply to it.
		{ID: "backup-pool", Disabled: true, Schedule: "sat 01:00", Storage: "local", Pool: "apps", Exclude: "101"},
	}
	for _, g := range c.Guests {
		if g.VMID == 101 {
			g.Pool = "apps"
		}
	}
	e := newEnvWith(t, c, nil)
	res, err := e.client.BackupCoverage(t.Context(), proxmoxsafe.BackupCoverageInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nonGET(e)) != 0 {
		t.Errorf("non-GET requests: %v", nonGET(e))
	}
	by := map[int]proxmoxsafe.GuestCoverage{}
	for _, g := range res.Guests {
		by[g.VMID] = g
	}
	if g := by[101]; g.Newest == nil || len(g.Findings) != 0 || !slices.Equal(g.Jobs, []string{"backup-nightly", "backup-pool"}) {
		t.Errorf("101 = %+v", g)
	}
	if g := by[100]; g.Newest == nil || !slices.Contains(g.Findings, "newest backup older than 7 days") {
		t.Errorf("100 = %+v", g)
	}
	if g := by[102]; g.Newest != nil || !slices.Equal(g.Findings, []string{"no backup", "not covered by an enabled job"}) || !slices.Equal(g.Jobs, []string{"backup-old"}) {
		t.Errorf("102 = %+v", g)
	}
	if _, ok := by[300]; ok || res.Unchecked != 1 {
		t.Errorf("300 (pve3, not allowlisted) reported, unchecked = %d", res.Unchecked)
	}
	if len(res.Jobs) != 3 || res.Jobs[0].NextRun.IsZero() || !slices.Equal(res.Jobs[0].Guests, []int{100, 101}) || res.Jobs[1].Enabled {
		t.Errorf("jobs = %+v", res.Jobs)
	}
	if j := res.Jobs[2]; !slices.Equal(j.Guests, []int{101}) || j.Selection != "pool apps" {
		t.Errorf("pool job = %+v, want guest 101 only", j)
	}
	page, err := e.client.BackupCoverage(t.Context(), proxmoxsafe.BackupCoverageInput{Limit: 2})
	if err != nil || len(page.Guests) != 2 || page.NextCursor == "" || page.Total != res.Total {
		t.Fatalf("page = %+v, %v", page, err)
	}
	next, err := e.client.BackupCoverage(t.Context(), proxmoxsafe.BackupCoverageInput{Limit: 2, Cursor: page.NextCursor})
	if err != nil || len(next.Guests) == 0 || next.Guests[0].VMID <= page.Guests[1].VMID {
		t.Fatalf("next = %+v, %v", next, err)
	}
}

// TestBackupCoverageBounded: on 2,000 guests with backup notes and jobs
// that select every guest (2, and 20 whose VMID lists take a third of the
// answer), a page stays within the 64 KiB every list answer keeps, by
// ending early (next_cursor) rather than at the limit, and each job lists
// at most MaxJobGuests VMIDs while guests_total counts them all; walking
// the cursors lists every guest once.
func TestBackupCoverageBounded(t *testing.T) {
	t.Parallel()
	for _, jobs := range []int{2, 20} {
		t.Run(strconv.Itoa(jobs)+" jobs", func(t *testing.T) {
			t.Parallel()
			coverageBounded(t, jobs)
		})
	}
}

func coverageBounded(t *testing.T, jobs int) {
	c := proxmoxtest.GenerateCluster(2, 1000, 1)
	for _, st := range c.Storages {
		for _, b := range st.Backups {
			b.Notes = strings.Repeat("nightly backup of the web tier, kept ", 4)
		}
	}
	for i := range jobs {
		c.BackupJobs = append(c.BackupJobs, &proxmoxtest.BackupJob{ID: "backup-all-" + strconv.Itoa(i), Schedule: "21:00", Storage: "local", Mode: "snapshot", All: true})
	}
	e := newEnvWith(t, c, func(cfg *proxmoxsafe.Config) { cfg.Policy.AllowedNodes = []string{c.Nodes[0].Name, c.Nodes[1].Name} })
	seen := map[int]bool{}
	pages := 0
	for cursor := ""; ; pages++ {
		res, err := e.client.BackupCoverage(t.Context(), proxmoxsafe.BackupCoverageInput{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if len(b) > 64<<10 {
			t.Fatalf("page %d: %d bytes of JSON, want at most 64 KiB", pages, len(b))
		}
		if res.NextCursor != "" && len(res.Guests) == 200 {
			t.Errorf("page %d is the full default limit: the byte bound did not end it", pages)
		}
		for _, j := range res.Jobs {
			if j.GuestsTotal != 2000 || len(j.Guests) != proxmoxsafe.MaxJobGuests {
				t.Fatalf("job %s: %d guests listed, guests_total %d", j.ID, len(j.Guests), j.GuestsTotal)
			}
		}
		for _, g := range res.Guests {
			if seen[g.VMID] {
				t.Fatalf("guest %d listed twice", g.VMID)
			}
			seen[g.VMID] = true
		}
		if pages == 0 {
			t.Logf("first page: %d guests, %d bytes of JSON", len(res.Guests), len(b))
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if len(seen) != 2000 {
		t.Errorf("%d guests listed over %d pages, want 2000", len(seen), pages+1)
	}
	if len(nonGET(e)) != 0 {
		t.Errorf("non-GET requests: %v", nonGET(e))
	}
}
