package settings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The recent-backup guard (proxmoxsafe.Policy.RecentBackup): off unless
// the operator names a maximum backup age.

func recentBackupSetting() *setting {
	return &setting{flag: "recent-backup", env: "PROXMOX_SAFE_RECENT_BACKUP", def: "off",
		docDefault: "`off`",
		doc: "Refuses a guest's destroy (`guest_destroy`), snapshot rollback (`snapshot_rollback`) or config change (`guest_config_set`, `disk_resize`) unless the guest has a backup newer than this on a backup storage of its node; the refusal names the newest backup and says to run `backup_create` first. " +
			"A Go duration for all three classes (`24h`), or per class: `destroy=24h,snapshot-admin=24h,config=168h` (a class left out is not checked). `off` turns it off. The token then also needs to list the guest's backups (Datastore.AllocateSpace on the storages and VM.Backup on the guest); without that a guest looks unbacked and is refused.",
		help: "refuse destroy, snapshot rollback and config changes of a guest without a backup newer than this: a Go duration (24h) or per class destroy=24h,snapshot-admin=24h,config=168h; off (default) turns it off",
		set:  setRecentBackup}
}

func setRecentBackup(c *Config, v string) error {
	guard, err := ParseRecentBackup(v)
	if err != nil {
		return err
	}
	c.Protect.RecentBackup = guard
	return nil
}

// ParseRecentBackup parses the recent-backup setting: "off" or "" (no
// guard), one Go duration for every class of
// proxmoxsafe.RecentBackupClasses, or class=duration pairs.
func ParseRecentBackup(v string) (map[proxmoxsafe.Class]time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "off") {
		return nil, nil
	}
	classes := proxmoxsafe.RecentBackupClasses()
	out := map[proxmoxsafe.Class]time.Duration{}
	if !strings.Contains(v, "=") {
		d, err := recentBackupAge(v)
		if err != nil {
			return nil, err
		}
		for _, cl := range classes {
			out[cl] = d
		}
		return out, nil
	}
	for _, item := range splitList(v) {
		name, val, ok := strings.Cut(item, "=")
		cl := proxmoxsafe.Class(strings.TrimSpace(name))
		if !ok || !slices.Contains(classes, cl) {
			return nil, fmt.Errorf("%s: want class=duration with a class of %s", sanitize.Quote(item), ClassNames(classes))
		}
		if _, dup := out[cl]; dup {
			return nil, fmt.Errorf("class %s is named twice", cl)
		}
		d, err := recentBackupAge(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cl, err)
		}
		out[cl] = d
	}
	return out, nil
}

func recentBackupAge(v string) (time.Duration, error) {
	d, err := goDuration(v)
	if err != nil {
		return 0, err
	}
	if d < time.Minute || d > proxmoxsafe.MaxRecentBackupAge {
		return 0, fmt.Errorf("must be from 1m to %s (got %s)", proxmoxsafe.MaxRecentBackupAge, d)
	}
	return d, nil
}

// DescribeRecentBackup says what the guard requires, for doctor: "off",
// or the classes with their ages.
func DescribeRecentBackup(p proxmoxsafe.Policy) string {
	var parts []string
	for _, cl := range proxmoxsafe.RecentBackupClasses() {
		if d, ok := p.RecentBackupAge(cl); ok {
			parts = append(parts, string(cl)+"="+d.String())
		}
	}
	if len(parts) == 0 {
		return "off"
	}
	return strings.Join(parts, ", ")
}
