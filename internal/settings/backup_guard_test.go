package settings

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestRecentBackupSetting: off by default; one duration guards the three
// classes, class=duration pairs each named one; the policy gets it and
// doctor's description says it; bad values are refused with the reason.
func TestRecentBackupSetting(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(base...))
	if err != nil {
		t.Fatal(err)
	}
	p := proxmoxsafe.Policy{}
	ApplyProtect(&p, c.Protect)
	if p.RecentBackup != nil || DescribeRecentBackup(p) != "off" {
		t.Errorf("default: %v, %q", p.RecentBackup, DescribeRecentBackup(p))
	}
	for v, want := range map[string]map[proxmoxsafe.Class]time.Duration{
		"24h":                      {proxmoxsafe.ClassDestroy: 24 * time.Hour, proxmoxsafe.ClassSnapshotAdmin: 24 * time.Hour, proxmoxsafe.ClassConfig: 24 * time.Hour},
		"destroy=24h, config=168h": {proxmoxsafe.ClassDestroy: 24 * time.Hour, proxmoxsafe.ClassConfig: 168 * time.Hour},
		"off":                      nil,
	} {
		c, err := Parse(nil, env(with("PROXMOX_SAFE_RECENT_BACKUP", v)...))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if !maps.Equal(c.Protect.RecentBackup, want) {
			t.Errorf("%q = %v, want %v", v, c.Protect.RecentBackup, want)
		}
	}
	c, err = Parse([]string{"--recent-backup", "destroy=48h"}, env(base...))
	if err != nil {
		t.Fatal(err)
	}
	p = proxmoxsafe.Policy{}
	ApplyProtect(&p, c.Protect)
	if got := DescribeRecentBackup(p); got != "destroy=48h0m0s" {
		t.Errorf("describe = %q", got)
	}
	for v, want := range map[string]string{
		"7d":                     "must be a duration with a unit",
		"power=24h":              "want class=duration with a class of destroy, snapshot-admin, config",
		"destroy=24h,destroy=1h": "named twice",
		"config=10s":             "must be from 1m",
	} {
		_, err := Parse(nil, env(with("PROXMOX_SAFE_RECENT_BACKUP", v)...))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "PROXMOX_SAFE_RECENT_BACKUP") {
			t.Errorf("%q: err = %v, want %q", v, err, want)
		}
	}
}
