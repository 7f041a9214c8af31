package settings

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

func TestResponderSettings(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(with(
		"PROXMOX_SAFE_PROTECTED", " 101, db.example.com ,tag:critical, pool:prod, name:cache, vmid:102 ",
		"PROXMOX_SAFE_MIN_UPTIME", "90m",
		"PROXMOX_SAFE_SNAPSHOT_MAX_AGE", "168h",
		"PROXMOX_SAFE_SNAPSHOT_MAX_COUNT", "10",
		"PROXMOX_SAFE_AUTOSNAP_MARKER", "nightly-job",
		"PROXMOX_SAFE_RESET_WITHOUT_AGENT", "true",
		"PROXMOX_SAFE_APPROVALS", "responder=phrase",
	)...))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Protect
	if !slices.Equal(g.ProtectedIDs, []int{101, 102}) || !slices.Equal(g.ProtectedNames, []string{"db.example.com", "cache"}) ||
		!slices.Equal(g.ProtectedTags, []string{"critical"}) || !slices.Equal(g.ProtectedPools, []string{"prod"}) {
		t.Errorf("protected = %+v", g)
	}
	want := retention.Policy{MaxAge: 168 * time.Hour, MaxCount: 10, AutosnapMarker: "nightly-job"}
	if g.MinUptime != 90*time.Minute || g.Retention != want || !g.ResetWithoutAgent {
		t.Errorf("guards = %+v", g)
	}
	// PROXMOX_SAFE_APPROVALS may ask for the phrase.
	p := proxmoxsafe.Policy{Approvals: c.Approvals}
	ApplyProtect(&p, g)
	if p.MinUptime != 90*time.Minute || !slices.Equal(p.Approvals[proxmoxsafe.ClassResponder], []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelPhrase}) {
		t.Errorf("policy = %+v", p)
	}
	// Defaults: the library's; the responder class needs no phrase.
	c, err = Parse(nil, env(base...))
	if err != nil {
		t.Fatal(err)
	}
	p = proxmoxsafe.Policy{}
	ApplyProtect(&p, c.Protect)
	if p.MinUptime != 0 || p.Retention != (retention.Policy{}) ||
		!slices.Equal(p.Approvals[proxmoxsafe.ClassResponder], []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelNone}) {
		t.Errorf("default policy = %+v", p)
	}
	// 0 turns the uptime guard off.
	c, err = Parse(nil, env(with("PROXMOX_SAFE_MIN_UPTIME", "0")...))
	if err != nil || c.Protect.MinUptime >= 0 {
		t.Errorf("MIN_UPTIME=0: %+v %v", c.Protect, err)
	}
}

func TestResponderSettingsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"PROXMOX_SAFE_PROTECTED", "99"}, "PROXMOX_SAFE_PROTECTED (--protected): \"99\" is not a VMID"},
		{[]string{"PROXMOX_SAFE_PROTECTED", "host:db"}, "unknown kind \"host\""},
		{[]string{"PROXMOX_SAFE_MIN_UPTIME", "60"}, "PROXMOX_SAFE_MIN_UPTIME (--min-uptime): must be a duration with a unit"},
		{[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_AGE", "1d"}, "PROXMOX_SAFE_SNAPSHOT_MAX_AGE (--snapshot-max-age): must be a duration"},
		{[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_AGE", "0"}, "PROXMOX_SAFE_SNAPSHOT_MAX_AGE"},
		{[]string{"PROXMOX_SAFE_SNAPSHOT_MAX_COUNT", "0"}, "from 1 to 1000"},
		{[]string{"PROXMOX_SAFE_PROFILE", "claptrap", "MCP_PROXMOX_PROFILE", "responder"}, "both set, to different values"},
		{[]string{"MCP_PROXMOX_PROFILE", "chaos"}, "MCP_PROXMOX_PROFILE (alias of PROXMOX_SAFE_PROFILE (--profile)): unknown profile \"chaos\""},
	} {
		_, err := Parse(nil, env(with(tc.kv...)...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.kv, err, tc.want)
		}
	}
}

// A protection the library refuses (a tag Proxmox could not hold) is a
// startup error that names the setting.
func TestResponderLibraryErrorNamesSetting(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(with("MCP_PROXMOX_PROTECTED", "tag:bad;tag")...))
	if err != nil {
		t.Fatal(err)
	}
	p := proxmoxsafe.Policy{}
	ApplyProtect(&p, c.Protect)
	_, err = proxmoxsafe.New(proxmoxsafe.Config{URL: c.URL, TokenID: c.TokenID, TokenSecret: c.TokenSecret.Reveal(), Policy: p})
	if err = c.LibraryError(err); err == nil || !strings.Contains(err.Error(), "PROXMOX_SAFE_PROTECTED (--protected): Policy.ProtectedTags: \"bad;tag\" is not a Proxmox tag") {
		t.Errorf("err = %v", err)
	}
}
