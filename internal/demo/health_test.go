package demo

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestDemoHealthReport: the health report on the demo's cluster has at
// least one finding of every kind the demo is seeded with, sorted by
// severity, each naming a tool.
func TestDemoHealthReport(t *testing.T) {
	t.Parallel()
	// The admin profile: its token may see the backups (Datastore.AllocateSpace,
	// VM.Backup), so old ones are found; with the README role every guest
	// looks unbacked.
	cfg := parse(t, "--profile", "admin")
	var stderr strings.Builder
	lib, closers, err := Start(cfg, "v-test", &stderr)
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	client, err := proxmoxsafe.New(lib)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.HealthReport(t.Context(), proxmoxsafe.HealthReportInput{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range res.Findings {
		kinds[f.Kind]++
		if f.Tool == "" || f.Evidence == "" || f.Subject == "" {
			t.Errorf("finding without tool, evidence or subject: %+v", f)
		}
	}
	for _, k := range []string{"node-offline", "ceph", "ha-error", "replication", "zfs", "disk-smart", "disk-wearout", "service",
		"storage", "updates", "no-backup", "backup-old", "snapshot-old", "agent-disabled"} {
		if kinds[k] == 0 {
			t.Errorf("no %s finding; kinds %v", k, kinds)
		}
	}
	if !slices.IsSortedFunc(res.Findings, func(a, b proxmoxsafe.HealthFinding) int { return rank(a.Severity) - rank(b.Severity) }) {
		t.Error("findings are not sorted by severity")
	}
	if res.Total != len(res.Findings) || res.Critical == 0 || res.Warning == 0 || res.Info == 0 || !slices.Equal(res.Nodes, []string{"pve1", "pve2", "pve3"}) {
		t.Errorf("totals %d (%d/%d/%d), nodes %v", res.Total, res.Critical, res.Warning, res.Info, res.Nodes)
	}
	for _, f := range res.Findings {
		t.Logf("%-8s %-14s %-28s %s → %s", f.Severity, f.Kind, f.Subject, f.Evidence, f.Tool)
	}
}

func rank(s string) int { return map[string]int{"critical": 0, "warning": 1, "info": 2}[s] }
