package retention_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// retentionNow is the fixed "now" of the retention tests.
var retentionNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// snap builds a hand-made history entry taken age ago.
func snap(name, desc string, age time.Duration) retention.Snapshot {
	return retention.Snapshot{Name: name, Description: desc, Time: retentionNow.Add(-age)}
}

const auto = "cv4pve-autosnap"

func TestPlan(t *testing.T) {
	t.Parallel()
	h := time.Hour
	tests := []struct {
		name   string
		snaps  []retention.Snapshot
		policy retention.Policy
		// del lists "name:rule" in execution order; kept lists names oldest first.
		del  []string
		kept []string
	}{
		{name: "empty history", snaps: nil, del: nil, kept: nil},
		{name: "only the current pseudo-snapshot",
			snaps: []retention.Snapshot{{Name: "current", Description: "You are here!"}},
			del:   nil, kept: nil},
		{name: "current is never planned even when old",
			snaps: []retention.Snapshot{snap("current", "You are here!", 100*h), snap("old", "", 30*h)},
			del:   []string{"old:max-age"}, kept: nil},
		{name: "young and few: nothing to do",
			snaps: []retention.Snapshot{snap("a", "", 1*h), snap("b", auto, 2*h)},
			del:   nil, kept: []string{"b", "a"}},
		{name: "max age oldest first",
			snaps: []retention.Snapshot{snap("mid", "", 30*h), snap("new", "", 1*h), snap("oldest", auto, 50*h)},
			del:   []string{"oldest:max-age", "mid:max-age"}, kept: []string{"new"}},
		{name: "exactly max age is not older",
			snaps: []retention.Snapshot{snap("edge", "", 24*h), snap("past", "", 24*h+time.Second)},
			del:   []string{"past:max-age"}, kept: []string{"edge"}},
		{name: "keep in the name survives age",
			snaps: []retention.Snapshot{snap("keep-before-upgrade", "", 900*h), snap("x", "", 30*h)},
			del:   []string{"x:max-age"}, kept: []string{"keep-before-upgrade"}},
		{name: "keep in the description in any case",
			snaps: []retention.Snapshot{snap("golden", "KEEP: golden image", 900*h), snap("y", auto+" KeeP", 900*h)},
			del:   nil, kept: []string{"golden", "y"}},
		{name: "count: manual before automatic",
			snaps: []retention.Snapshot{
				snap("auto1", auto, 9*h), snap("auto2", auto, 8*h), snap("man1", "", 7*h),
				snap("auto3", auto, 6*h), snap("man2", "", 5*h), snap("auto4", auto, 4*h),
				snap("man3", "", 3*h), snap("auto5", auto, 2*h),
			},
			del:  []string{"man1:max-count", "man2:max-count"},
			kept: []string{"auto1", "auto2", "auto3", "auto4", "man3", "auto5"}},
		{name: "count: automatic only as last resort",
			snaps: []retention.Snapshot{
				snap("a1", auto, 9*h), snap("a2", auto, 8*h), snap("a3", auto, 7*h), snap("m1", "", 1*h),
			},
			policy: retention.Policy{MaxCount: 1},
			del:    []string{"m1:max-count", "a1:max-count", "a2:max-count"},
			kept:   []string{"a3"}},
		{name: "count includes keep-marked snapshots",
			snaps: []retention.Snapshot{
				snap("keep1", "", 9*h), snap("keep2", "", 8*h), snap("m1", "", 7*h), snap("m2", "", 6*h),
			},
			policy: retention.Policy{MaxCount: 3},
			del:    []string{"m1:max-count"},
			kept:   []string{"keep1", "keep2", "m2"}},
		{name: "only keep-marked left above the count",
			snaps: []retention.Snapshot{
				snap("keep1", "", 3*h), snap("keep2", "", 2*h), snap("keep3", "", 1*h), snap("m", "", 4*h),
			},
			policy: retention.Policy{MaxCount: 2},
			del:    []string{"m:max-count"},
			kept:   []string{"keep1", "keep2", "keep3"}},
		{name: "age then count, in that order",
			snaps: []retention.Snapshot{
				snap("old", "", 48*h), snap("m1", "", 5*h), snap("m2", "", 4*h), snap("a1", auto, 3*h),
			},
			policy: retention.Policy{MaxCount: 2},
			del:    []string{"old:max-age", "m1:max-count"},
			kept:   []string{"m2", "a1"}},
		{name: "ties: same second ordered by name",
			snaps: []retention.Snapshot{
				snap("zeta", "", 30*h), snap("alpha", "", 30*h), snap("beta", "", 2*h), snap("aaa", "", 2*h),
			},
			policy: retention.Policy{MaxCount: 1},
			del:    []string{"alpha:max-age", "zeta:max-age", "aaa:max-count"},
			kept:   []string{"beta"}},
		{name: "no creation time is kept and counted",
			snaps: []retention.Snapshot{
				{Name: "undated"}, snap("m1", "", 2*h), snap("m2", "", 1*h),
			},
			policy: retention.Policy{MaxCount: 2},
			del:    []string{"m1:max-count"},
			kept:   []string{"undated", "m2"}},
		{name: "custom marker and age",
			snaps: []retention.Snapshot{
				snap("s1", "made by nightly-job", 3*h), snap("s2", auto, 2*h), snap("s3", "", 1*h),
			},
			policy: retention.Policy{MaxAge: 150 * time.Minute, MaxCount: 1, AutosnapMarker: "nightly-job"},
			del:    []string{"s1:max-age", "s2:max-count"},
			kept:   []string{"s3"}},
		{name: "duplicate names are planned once",
			snaps: []retention.Snapshot{snap("dup", "", 30*h), snap("dup", "", 1*h)},
			del:   []string{"dup:max-age"}, kept: nil},
		{name: "invalid policy deletes nothing",
			snaps:  []retention.Snapshot{snap("old", "", 900*h)},
			policy: retention.Policy{MaxAge: -time.Hour},
			del:    nil, kept: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := retention.Plan(tt.snaps, tt.policy, retentionNow)
			var del, kept []string
			for _, d := range plan.Delete {
				if !d.Delete || d.Reason == "" {
					t.Errorf("delete entry %+v lacks Delete or a reason", d)
				}
				del = append(del, d.Name+":"+string(d.Rule))
			}
			for _, d := range plan.Keep {
				if d.Delete || d.Reason == "" {
					t.Errorf("keep entry %+v has Delete or lacks a reason", d)
				}
				kept = append(kept, d.Name)
			}
			if !slices.Equal(del, tt.del) {
				t.Errorf("delete = %v, want %v", del, tt.del)
			}
			if !slices.Equal(kept, tt.kept) {
				t.Errorf("keep = %v, want %v", kept, tt.kept)
			}
		})
	}
}

func TestPlanDefaults(t *testing.T) {
	t.Parallel()
	plan := retention.Plan(nil, retention.Policy{}, retentionNow)
	want := retention.Policy{MaxAge: 24 * time.Hour, MaxCount: 6, AutosnapMarker: "cv4pve-autosnap"}
	if plan.Policy != want {
		t.Errorf("effective policy = %+v, want %+v", plan.Policy, want)
	}
	if plan.Delete == nil || plan.Keep == nil {
		t.Error("empty plan lists must be empty, not nil (they are JSON arrays)")
	}
	// Seven young manual snapshots: the default count deletes exactly one.
	var snaps []retention.Snapshot
	for i := range 7 {
		snaps = append(snaps, snap(fmt.Sprintf("s%d", i), "", time.Duration(7-i)*time.Hour))
	}
	plan = retention.Plan(snaps, retention.Policy{}, retentionNow)
	if len(plan.Delete) != 1 || plan.Delete[0].Name != "s0" {
		t.Errorf("default count: delete = %+v, want only s0", plan.Delete)
	}
	d, ok := plan.Decision("s0")
	if !ok || !d.Delete || d.Rule != retention.RuleMaxCount || !strings.Contains(d.Reason, "maximum count 6") {
		t.Errorf("Decision(s0) = %+v, %v", d, ok)
	}
}

// TestMaxAgeReasonReadable: the reason a person reads says ages in days
// and hours ("taken 45d 3h ago"), not Go's "1083h0m0s".
func TestMaxAgeReasonReadable(t *testing.T) {
	t.Parallel()
	plan := retention.Plan([]retention.Snapshot{snap("old", "", 45*24*time.Hour+3*time.Hour)}, retention.Policy{MaxAge: 30 * 24 * time.Hour}, retentionNow)
	d, ok := plan.Decision("old")
	if !ok || d.Rule != retention.RuleMaxAge || d.Reason != "older than the maximum age 30d (taken 45d 3h ago)" {
		t.Errorf("Decision(old) = %+v, %v", d, ok)
	}
}

func TestPolicyWithDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		policy retention.Policy
		want   string // "" for valid
	}{
		{retention.Policy{}, ""},
		{retention.Policy{MaxAge: time.Minute, MaxCount: retention.MaxCountLimit, AutosnapMarker: "x"}, ""},
		{retention.Policy{MaxAge: -time.Nanosecond}, "MaxAge must not be negative"},
		{retention.Policy{MaxCount: -1}, "MaxCount must be from 0"},
		{retention.Policy{MaxCount: retention.MaxCountLimit + 1}, "MaxCount must be from 0"},
		{retention.Policy{AutosnapMarker: " auto"}, "AutosnapMarker"},
		{retention.Policy{AutosnapMarker: strings.Repeat("a", 65)}, "AutosnapMarker"},
	} {
		got, err := tt.policy.WithDefaults()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.policy, err)
		case tt.want == "" && (got.MaxAge == 0 || got.MaxCount == 0 || got.AutosnapMarker == ""):
			t.Errorf("%+v: defaults not filled in: %+v", tt.policy, got)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v, want one containing %q", tt.policy, err, tt.want)
		}
	}
}

func TestHasKeepMarker(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, desc string
		want       bool
	}{
		{"keep", "", true},
		{"KEEP-before-upgrade", "", true},
		{"housekeeping", "", true},
		{"nightly", "Keep: golden image", true},
		{"nightly", "cv4pve-autosnap", false},
		{"", "", false},
	} {
		if got := retention.HasKeepMarker(tt.name, tt.desc); got != tt.want {
			t.Errorf("HasKeepMarker(%q, %q) = %v, want %v", tt.name, tt.desc, got, tt.want)
		}
	}
}

// FuzzPlan checks the invariants of the retention policy for any
// history: a keep-marked snapshot is never deleted; every snapshot is
// decided exactly once; at most MaxCount remain unless only keep-marked or
// undated ("protected") ones remain; nothing younger than MaxAge goes while
// the count allows it; deletions are by age first, then manual before
// automatic, each group oldest first.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{}, uint8(6), uint16(24*60))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, uint8(2), uint16(60))
	f.Add([]byte{0xff, 0, 0xff, 0, 7, 7, 7, 7, 7, 7, 7, 7}, uint8(1), uint16(1))
	f.Add([]byte{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, maxCount uint8, maxAgeMin uint16) {
		policy := retention.Policy{MaxCount: int(maxCount % 20), MaxAge: time.Duration(maxAgeMin) * time.Minute}
		var snaps []retention.Snapshot
		// Three bytes per snapshot: flags, then the age in minutes.
		for i := 0; i+3 <= len(data) && len(snaps) < 64; i += 3 {
			flags := data[i]
			age := time.Duration(binary.BigEndian.Uint16(data[i+1:i+3])) * time.Minute
			s := retention.Snapshot{Name: fmt.Sprintf("s%d", i/3), Time: retentionNow.Add(-age)}
			switch flags % 8 {
			case 1:
				s.Name = fmt.Sprintf("keep%d", i/3)
			case 2:
				s.Description = "do not touch: KEEP"
			case 3, 4:
				s.Description = "cv4pve-autosnap"
			case 5:
				s.Time = time.Time{}
			case 6:
				s.Name = "current"
			case 7:
				s.Time = retentionNow.Add(age) // clock skew: in the future
			}
			if flags&0x80 != 0 && len(snaps) > 0 {
				s.Time = snaps[len(snaps)-1].Time // a tie
			}
			snaps = append(snaps, s)
		}
		plan := retention.Plan(snaps, policy, retentionNow)
		p := plan.Policy

		input := map[string]retention.Snapshot{}
		for _, s := range snaps {
			if s.Name != "current" {
				input[s.Name] = s
			}
		}
		decided := map[string]int{}
		for _, d := range plan.Delete {
			decided[d.Name]++
			s := input[d.Name]
			if retention.HasKeepMarker(s.Name, s.Description) {
				t.Fatalf("keep-marked snapshot %q deleted", d.Name)
			}
			if d.Name == "current" {
				t.Fatal("the current pseudo-snapshot was planned for deletion")
			}
			if s.Time.IsZero() {
				t.Fatalf("undated snapshot %q deleted", d.Name)
			}
		}
		protected := 0
		for _, d := range plan.Keep {
			decided[d.Name]++
			if d.Rule == retention.RuleKeepMarker || d.Rule == retention.RuleNoTime {
				protected++
			}
		}
		for name := range input {
			if decided[name] != 1 {
				t.Fatalf("snapshot %q decided %d times", name, decided[name])
			}
		}
		if len(decided) != len(input) {
			t.Fatalf("plan names %d snapshots, history has %d", len(decided), len(input))
		}
		if len(plan.Keep) > p.MaxCount && len(plan.Keep) != protected {
			t.Fatalf("%d remain (max %d) although only %d are keep-marked or undated", len(plan.Keep), p.MaxCount, protected)
		}
		// Count deletions happen only while over the count, and never take
		// a young snapshot that the count did not require.
		byAge, byCount := 0, 0
		for _, d := range plan.Delete {
			switch d.Rule {
			case retention.RuleMaxAge:
				if byCount > 0 {
					t.Fatal("an age deletion follows a count deletion")
				}
				byAge++
				if retentionNow.Sub(d.Time) <= p.MaxAge {
					t.Fatalf("%q deleted by age but only %s old", d.Name, retentionNow.Sub(d.Time))
				}
			case retention.RuleMaxCount:
				byCount++
			default:
				t.Fatalf("delete entry with rule %q", d.Rule)
			}
		}
		if byCount > 0 && len(plan.Keep) > p.MaxCount && len(plan.Keep) != protected {
			t.Fatal("count deletions stopped early")
		}
		if byCount > 0 && len(plan.Keep) < p.MaxCount {
			t.Fatalf("count deletions went below the maximum count (%d left, max %d)", len(plan.Keep), p.MaxCount)
		}
		countDel := plan.Delete[byAge:]
		for i := 1; i < len(countDel); i++ {
			a, b := countDel[i-1], countDel[i]
			if a.Autosnap && !b.Autosnap {
				t.Fatalf("automatic %q deleted before manual %q", a.Name, b.Name)
			}
			if a.Autosnap == b.Autosnap && a.Time.After(b.Time) {
				t.Fatalf("%q deleted before the older %q", a.Name, b.Name)
			}
		}
		// A kept manual snapshot is never older than a count-deleted one.
		for _, k := range plan.Keep {
			if k.Rule != retention.RuleWithinLimits || k.Autosnap {
				continue
			}
			for _, d := range countDel {
				if !d.Autosnap && d.Time.After(k.Time) {
					t.Fatalf("kept manual %q is older than count-deleted %q", k.Name, d.Name)
				}
			}
		}
	})
}

// BenchmarkPlan plans over a 500-snapshot history (the most
// proxmoxsafe.MaxSnapshots lists), a third of them automatic and some
// keep-marked.
func BenchmarkPlan(b *testing.B) {
	var snaps []retention.Snapshot
	for i := range 500 {
		s := snap(fmt.Sprintf("s%03d", i), "", time.Duration(i)*17*time.Minute)
		switch i % 10 {
		case 0, 3, 6:
			s.Description = auto
		case 9:
			s.Description = "keep"
		}
		snaps = append(snaps, s)
	}
	b.ReportAllocs()
	for b.Loop() {
		plan := retention.Plan(snaps, retention.Policy{}, retentionNow)
		if len(plan.Delete) == 0 {
			b.Fatal("nothing planned")
		}
	}
}
