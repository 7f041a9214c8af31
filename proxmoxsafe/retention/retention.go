package retention

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/humantime"
)

// Defaults and bounds of [Policy].
const (
	// DefaultMaxAge is the age beyond which [Plan] deletes
	// a snapshot that carries no keep marker.
	DefaultMaxAge = 24 * time.Hour
	// DefaultMaxCount is how many snapshots [Plan] leaves
	// per guest when it can.
	DefaultMaxCount = 6
	// DefaultAutosnapMarker marks snapshots taken by an automatic snapshot
	// tool: cv4pve-autosnap writes it into the description of every
	// snapshot it takes.
	DefaultAutosnapMarker = "cv4pve-autosnap"
	// KeepMarker in a snapshot's name or description (any case) means
	// "never delete this one automatically".
	KeepMarker = "keep"
	// MaxCountLimit is the largest [Policy.MaxCount].
	MaxCountLimit = 1000
)

// Policy is the operator's rule for pruning a guest's snapshots ([Plan];
// the library's Client.CleanupSnapshots applies it). The zero value means
// the defaults: 24 hours, 6 snapshots, the cv4pve-autosnap marker.
type Policy struct {
	// MaxAge: older snapshots are deleted. Zero means
	// [DefaultMaxAge]; negative is invalid.
	MaxAge time.Duration `json:"max_age"`
	// MaxCount: while more snapshots remain, the oldest are deleted
	// (manual ones before automatic ones). Zero means
	// [DefaultMaxCount]; at most [MaxCountLimit].
	MaxCount int `json:"max_count"`
	// AutosnapMarker in a description (any case) marks an automatic
	// snapshot. Empty means [DefaultAutosnapMarker].
	AutosnapMarker string `json:"autosnap_marker"`
}

// WithDefaults returns the policy with every zero value replaced by its
// default, or an error naming the bad field (a negative MaxAge, a MaxCount
// out of range, a marker with surrounding white space or too long).
func (p Policy) WithDefaults() (Policy, error) {
	switch {
	case p.MaxAge < 0:
		return p, fmt.Errorf("MaxAge must not be negative (got %s)", p.MaxAge)
	case p.MaxCount < 0 || p.MaxCount > MaxCountLimit:
		return p, fmt.Errorf("MaxCount must be from 0 (default %d) to %d (got %d)", DefaultMaxCount, MaxCountLimit, p.MaxCount)
	case strings.TrimSpace(p.AutosnapMarker) != p.AutosnapMarker || len(p.AutosnapMarker) > 64:
		return p, fmt.Errorf("AutosnapMarker must have no surrounding white space and at most 64 characters")
	}
	if p.MaxAge == 0 {
		p.MaxAge = DefaultMaxAge
	}
	if p.MaxCount == 0 {
		p.MaxCount = DefaultMaxCount
	}
	if p.AutosnapMarker == "" {
		p.AutosnapMarker = DefaultAutosnapMarker
	}
	return p, nil
}

// Rule names the rule that decided a snapshot's fate.
type Rule string

// The rules of [Plan], in the order they apply.
const (
	// RuleKeepMarker: "keep" in the name or description; never deleted.
	RuleKeepMarker Rule = "keep-marker"
	// RuleNoTime: Proxmox gave no creation time, so the snapshot's age
	// and place in the order are unknown; it is kept.
	RuleNoTime Rule = "no-time"
	// RuleMaxAge: older than the maximum age; deleted.
	RuleMaxAge Rule = "max-age"
	// RuleMaxCount: deleted because more than the maximum count remained.
	RuleMaxCount Rule = "max-count"
	// RuleWithinLimits: young enough and within the count; kept.
	RuleWithinLimits Rule = "within-limits"
)

// Decision is what [Plan] decided for one snapshot.
type Decision struct {
	// Name is the snapshot's name.
	Name string `json:"name"`
	// Time is when it was taken; zero when Proxmox gave no time.
	Time time.Time `json:"time"`
	// Delete is true when the plan deletes it.
	Delete bool `json:"delete"`
	// Rule is the rule that decided; Reason says it in words.
	Rule   Rule   `json:"rule"`
	Reason string `json:"reason"`
	// Keep and Autosnap report the markers found.
	Keep     bool `json:"keep"`
	Autosnap bool `json:"autosnap"`
}

// Result is the exact outcome of applying a [Policy] to a snapshot
// history, before anything is deleted: what [Plan] returns.
type Result struct {
	// Policy is the effective policy, defaults filled in.
	Policy Policy `json:"policy"`
	// Delete lists the snapshots to delete, in the order they are to be
	// deleted: by age first (oldest first), then by count (oldest manual
	// first, automatic ones last).
	Delete []Decision `json:"delete"`
	// Keep lists the snapshots that stay, oldest first.
	Keep []Decision `json:"keep"`
}

// Decision returns the decision for the named snapshot and whether the
// plan has one.
func (p *Result) Decision(name string) (Decision, bool) {
	for _, list := range [][]Decision{p.Delete, p.Keep} {
		for _, d := range list {
			if d.Name == name {
				return d, true
			}
		}
	}
	return Decision{}, false
}

// HasKeepMarker reports whether a snapshot's name or description contains
// [KeepMarker] in any case ("keep", "KEEP-before-upgrade", "housekeeping"
// all count: a false "keep" costs disk space, a missed one loses data).
func HasKeepMarker(name, description string) bool {
	return containsFold(name, KeepMarker) || containsFold(description, KeepMarker)
}

// containsFold reports whether sub is in s, in any case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// isAutosnap reports whether a description carries the autosnap marker.
func isAutosnap(description, marker string) bool {
	return marker != "" && containsFold(description, marker)
}

// Snapshot is what [Plan] reads of one snapshot.
type Snapshot struct {
	// Name is the snapshot's name; Proxmox's "current" pseudo-entry is
	// ignored.
	Name string
	// Description is the snapshot's free text, in full: a marker cut off
	// by a display cap is not seen.
	Description string
	// Time is when it was taken; zero when Proxmox gave no time.
	Time time.Time
}

// Plan applies the retention policy to a guest's snapshots at the
// time now and returns the plan. It does no I/O and is deterministic.
//
// The rules, in order:
//  1. A snapshot with [KeepMarker] in its name or description is never
//     deleted. Neither is one without a creation time (its age is unknown).
//  2. Every other snapshot older than MaxAge is deleted, oldest first.
//  3. While more than MaxCount snapshots remain (kept ones included), the
//     oldest manual snapshot is deleted; automatic ones (description holds
//     the autosnap marker) only when no manual candidate is left.
//
// Snapshots taken at the same second are ordered by name. The "current"
// pseudo-entry of Proxmox's snapshot list is not a snapshot and is ignored,
// as are duplicate names after the first. Descriptions should be passed in
// full: a marker cut off by truncation is not seen. An invalid policy
// (negative MaxAge, MaxCount out of range) makes an empty plan with
// the defaults: nothing is deleted on a policy nobody could read.
func Plan(snaps []Snapshot, policy Policy, now time.Time) Result {
	p, err := policy.WithDefaults()
	if err != nil {
		p, _ = Policy{}.WithDefaults()
		return Result{Policy: p, Delete: []Decision{}, Keep: []Decision{}}
	}
	plan := Result{Policy: p, Delete: []Decision{}, Keep: []Decision{}}

	seen := map[string]bool{}
	var all []Decision
	for _, s := range snaps {
		if strings.EqualFold(s.Name, "current") || seen[s.Name] {
			continue
		}
		seen[s.Name] = true
		all = append(all, Decision{
			Name:     s.Name,
			Time:     s.Time,
			Keep:     HasKeepMarker(s.Name, s.Description),
			Autosnap: isAutosnap(s.Description, p.AutosnapMarker),
		})
	}
	slices.SortFunc(all, func(a, b Decision) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Name, b.Name))
	})

	var kept, candidates []Decision
	for _, d := range all {
		switch {
		case d.Keep:
			d.Rule, d.Reason = RuleKeepMarker, fmt.Sprintf("its name or description contains %q: never deleted automatically", KeepMarker)
			kept = append(kept, d)
		case d.Time.IsZero():
			d.Rule, d.Reason = RuleNoTime, "Proxmox gave no creation time, so its age is unknown: kept"
			kept = append(kept, d)
		case now.Sub(d.Time) > p.MaxAge:
			d.Delete, d.Rule = true, RuleMaxAge
			d.Reason = fmt.Sprintf("older than the maximum age %s (taken %s ago)", humantime.Duration(p.MaxAge), humantime.Duration(now.Sub(d.Time)))
			plan.Delete = append(plan.Delete, d)
		default:
			candidates = append(candidates, d)
		}
	}

	// Count rule: manual candidates first, each group oldest first.
	byPriority := slices.Clone(candidates)
	slices.SortStableFunc(byPriority, func(a, b Decision) int {
		switch {
		case a.Autosnap == b.Autosnap:
			return 0 // already oldest first
		case a.Autosnap:
			return 1
		}
		return -1
	})
	remaining := len(kept) + len(candidates)
	doomed := map[string]bool{}
	for _, d := range byPriority {
		if remaining <= p.MaxCount {
			break
		}
		kind := "manual"
		if d.Autosnap {
			kind = "automatic"
		}
		d.Delete, d.Rule = true, RuleMaxCount
		d.Reason = fmt.Sprintf("%d snapshots remained, more than the maximum count %d: the oldest %s snapshot goes (manual ones before automatic ones)", remaining, p.MaxCount, kind)
		plan.Delete = append(plan.Delete, d)
		doomed[d.Name] = true
		remaining--
	}
	for _, d := range candidates {
		if !doomed[d.Name] {
			d.Rule, d.Reason = RuleWithinLimits, fmt.Sprintf("younger than %s and within the maximum count %d", p.MaxAge, p.MaxCount)
			kept = append(kept, d)
		}
	}
	slices.SortFunc(kept, func(a, b Decision) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Name, b.Name))
	})
	plan.Keep = append(plan.Keep, kept...)
	return plan
}
