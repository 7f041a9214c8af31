package settings

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// The responder profile's settings: protection rules that apply in every
// profile (protected guests, minimum uptime) and the snapshot retention
// policy, each with the MCP_PROXMOX_* name an existing deployment of the
// responder uses as an accepted alias.

// ProtectConfig is the binary's form of the protection and retention
// settings.
type ProtectConfig struct {
	ProtectedIDs   []int
	ProtectedNames []string
	ProtectedTags  []string
	ProtectedPools []string
	// MinUptime: 0 = the library's default (1 h); minUptimeOff = no guard.
	MinUptime         time.Duration
	ResetWithoutAgent bool
	Retention         retention.Policy
	// RecentBackup is the recent-backup guard (backup_guard.go); nil = off.
	RecentBackup map[proxmoxsafe.Class]time.Duration
}

// minUptimeOff is what "0" means for PROXMOX_SAFE_MIN_UPTIME: no guard.
const minUptimeOff = -1

// responderSettings are appended to the settings table (table.go).
func responderSettings() []*setting {
	return []*setting{
		{flag: "protected", env: "PROXMOX_SAFE_PROTECTED", def: "none",
			docDefault: "none",
			doc:        "Guests no mutation may touch, in every profile: comma-separated VMIDs (`101`), names (`db`; a short name also protects `db.example.com`, a full name also a guest named by its short form), `tag:NAME` (any case) and `pool:NAME`; `name:` and `vmid:` may be written out. Listings show `protected: true`. Names, tags and pools are read fresh from `/cluster/resources` before each mutation.",
			help:       "comma-separated guests no mutation may touch: a VMID (101), a name (db also protects db.example.com), tag:NAME or pool:NAME",
			set:        setProtected, aliases: []alias{sameAlias("MCP_PROXMOX_PROTECTED")}},
		{flag: "min-uptime", env: "PROXMOX_SAFE_MIN_UPTIME", def: proxmoxsafe.DefaultMinUptime.String(),
			docDefault: "`1h0m0s`",
			doc:        "Refuses a reboot or reset (`guest_power` reboot, `vm_reboot`, `vm_reset`) of a guest up for less, in every profile. A Go duration (`1h`, `90m`); `0` turns the guard off.",
			help:       "refuse a reboot or reset (guest_power reboot, vm_reboot, vm_reset) of a guest up for less, a Go duration such as 1h or 90m; 0 turns the guard off",
			set:        setMinUptime, aliases: []alias{sameAlias("MCP_PROXMOX_MIN_UPTIME")}},
		{flag: "snapshot-max-age", env: "PROXMOX_SAFE_SNAPSHOT_MAX_AGE", def: retention.DefaultMaxAge.String(),
			docDefault: "`24h0m0s`",
			doc:        "`snapshot_cleanup` deletes snapshots older than this unless keep-marked. A Go duration (`24h`, `168h`).",
			help:       "snapshot_cleanup deletes snapshots older than this (unless keep-marked), a Go duration such as 24h or 168h",
			set:        setSnapshotMaxAge, aliases: []alias{sameAlias("MCP_PROXMOX_SNAPSHOT_MAX_AGE")}},
		{flag: "snapshot-max-count", env: "PROXMOX_SAFE_SNAPSHOT_MAX_COUNT", def: strconv.Itoa(retention.DefaultMaxCount),
			docDefault: "`6`",
			doc:        "`snapshot_cleanup` then deletes the oldest while more remain (manual before automatic). 1 to 1000.",
			help:       fmt.Sprintf("snapshot_cleanup then deletes the oldest snapshots while more than this many remain (manual before automatic ones), 1 to %d", retention.MaxCountLimit),
			set:        setSnapshotMaxCount, aliases: []alias{sameAlias("MCP_PROXMOX_SNAPSHOT_MAX_COUNT")}},
		{flag: "autosnap-marker", env: "PROXMOX_SAFE_AUTOSNAP_MARKER", def: retention.DefaultAutosnapMarker,
			docDefault: "`cv4pve-autosnap`",
			doc:        "Text in a description that marks an automatic snapshot (any case).",
			help:       "text in a snapshot's description that marks it as automatic (deleted by count only as a last resort)",
			set:        setAutosnapMarker, aliases: []alias{sameAlias("MCP_PROXMOX_AUTOSNAP_MARKER")}},
		{flag: "reset-without-agent", env: "PROXMOX_SAFE_RESET_WITHOUT_AGENT", boolean: true, def: "false",
			docDefault: "`false`",
			doc:        "Lets `vm_reset` reset a VM without a configured guest agent (without one, a hung guest cannot be told from a busy one).",
			help:       "let vm_reset reset a VM that has no guest agent configured (without one, a hung guest cannot be told from a busy one)",
			set:        boolSetter(func(c *Config) *bool { return &c.Protect.ResetWithoutAgent })},
		recentBackupSetting(),
	}
}

// setProtected parses "101, db, tag:critical, pool:prod". A bare number
// is a VMID; "name:" may be written out; anything else bare is a name.
func setProtected(c *Config, v string) error {
	c.Protect.ProtectedIDs, c.Protect.ProtectedNames, c.Protect.ProtectedTags, c.Protect.ProtectedPools = nil, nil, nil, nil
	for _, item := range splitList(v) {
		kind, val, ok := strings.Cut(item, ":")
		if !ok {
			kind, val = "", item
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(strings.TrimSpace(kind)) {
		case "":
			if id, err := strconv.Atoi(val); err == nil {
				if !proxmoxsafe.ValidVMID(id) {
					return fmt.Errorf("%s is not a VMID (100 to 999999999)", sanitize.Quote(item))
				}
				c.Protect.ProtectedIDs = append(c.Protect.ProtectedIDs, id)
				continue
			}
			c.Protect.ProtectedNames = append(c.Protect.ProtectedNames, val)
		case "name":
			c.Protect.ProtectedNames = append(c.Protect.ProtectedNames, val)
		case "tag":
			c.Protect.ProtectedTags = append(c.Protect.ProtectedTags, val)
		case "pool":
			c.Protect.ProtectedPools = append(c.Protect.ProtectedPools, val)
		case "vmid", "id":
			id, err := strconv.Atoi(val)
			if err != nil || !proxmoxsafe.ValidVMID(id) {
				return fmt.Errorf("%s is not a VMID (100 to 999999999)", sanitize.Quote(item))
			}
			c.Protect.ProtectedIDs = append(c.Protect.ProtectedIDs, id)
		default:
			return fmt.Errorf("%s: unknown kind %s (use a VMID, a name, name:NAME, tag:NAME or pool:NAME)", sanitize.Quote(item), sanitize.Quote(kind))
		}
	}
	return nil
}

// goDuration parses a positive Go duration with a unit ("24h", "90m").
func goDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a duration with a unit such as 24h or 90m (got %s)", sanitize.Quote(v))
	}
	return d, nil
}

func setMinUptime(c *Config, v string) error {
	if strings.TrimSpace(v) == "0" {
		c.Protect.MinUptime = minUptimeOff
		return nil
	}
	d, err := goDuration(v)
	if err != nil {
		return fmt.Errorf("%w, or 0 for no guard", err)
	}
	c.Protect.MinUptime = d
	return nil
}

func setSnapshotMaxAge(c *Config, v string) error {
	d, err := goDuration(v)
	if err != nil {
		return err
	}
	c.Protect.Retention.MaxAge = d
	return nil
}

func setSnapshotMaxCount(c *Config, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > retention.MaxCountLimit {
		return fmt.Errorf("must be a whole number from 1 to %d (got %s)", retention.MaxCountLimit, sanitize.Quote(v))
	}
	c.Protect.Retention.MaxCount = n
	return nil
}

func setAutosnapMarker(c *Config, v string) error {
	v = strings.TrimSpace(v)
	if len(v) > 64 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("must be at most 64 printable characters")
	}
	c.Protect.Retention.AutosnapMarker = v
	return nil
}

// ApplyProtect puts the protection and retention settings into the policy, and
// the responder class's approval level: "none" unless PROXMOX_SAFE_APPROVALS
// names the class (an unattended responder has nobody to type a phrase;
// its protection rules and the audit are the safety).
func ApplyProtect(p *proxmoxsafe.Policy, g ProtectConfig) {
	p.ProtectedGuests = g.ProtectedIDs
	p.ProtectedNames = g.ProtectedNames
	p.ProtectedTags = g.ProtectedTags
	p.ProtectedPools = g.ProtectedPools
	p.MinUptime = g.MinUptime
	p.ResetWithoutAgent = g.ResetWithoutAgent
	p.Retention = g.Retention
	p.RecentBackup = g.RecentBackup
	if _, set := p.Approvals[proxmoxsafe.ClassResponder]; set {
		return
	}
	approvals := maps.Clone(p.Approvals)
	if approvals == nil {
		approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
	}
	approvals[proxmoxsafe.ClassResponder] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelNone}
	p.Approvals = approvals
}
