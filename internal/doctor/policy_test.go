package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestCheckPolicy: what a policy means is said before anything is sent:
// mutations without an allowed node warn with the fix, the approval levels
// in force are listed with what each needs, and a serve that would refuse
// to start (no audit log possible) is a failure now.
func TestCheckPolicy(t *testing.T) {
	t.Parallel()
	r := &report{w: &strings.Builder{}}
	checkPolicy(r, &settings.Config{Profile: "safe"}, proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}}, "")
	if r.warnings != 1 || !strings.Contains(r.checks[0].Message, "PVE_ALLOWED_NODES is empty") || !strings.Contains(r.checks[0].Details[0], "PVE_ALLOWED_NODES=pve1,pve2") {
		t.Errorf("no nodes: %+v", r.checks)
	}
	if r.problems != 1 || !strings.Contains(r.checks[len(r.checks)-1].Message, "would refuse to start") {
		t.Errorf("no audit log: problems %d, %+v", r.problems, r.checks)
	}

	r = &report{w: &strings.Builder{}}
	pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}}
	checkPolicy(r, &settings.Config{Profile: "safe", Demo: true}, pol, "/g")
	var all []string
	for _, c := range r.checks {
		all = append(all, c.Message)
		all = append(all, c.Details...)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"policy: mutation classes power on nodes pve1", "approvals: power=grant", "grant directory /g"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

// TestCheckRecentBackup: doctor says whether the recent-backup guard is
// on, with its ages, and names a guarded class that is not enabled.
func TestCheckRecentBackup(t *testing.T) {
	t.Parallel()
	r := &report{w: &strings.Builder{}}
	checkRecentBackup(r, proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{proxmoxsafe.ClassDestroy}})
	if len(r.checks) != 1 || !strings.Contains(r.checks[0].Message, "recent-backup guard: off") {
		t.Errorf("off: %+v", r.checks)
	}
	r = &report{w: &strings.Builder{}}
	checkRecentBackup(r, proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{proxmoxsafe.ClassDestroy},
		RecentBackup: map[proxmoxsafe.Class]time.Duration{proxmoxsafe.ClassDestroy: 24 * time.Hour, proxmoxsafe.ClassConfig: time.Hour}})
	if len(r.checks) != 1 || !strings.Contains(r.checks[0].Message, "recent-backup guard: destroy=24h0m0s, config=1h0m0s") ||
		len(r.checks[0].Details) != 1 || !strings.Contains(r.checks[0].Details[0], "class config is not enabled") {
		t.Errorf("on: %+v", r.checks)
	}
}
