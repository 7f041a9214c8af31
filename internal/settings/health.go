package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// healthSettings are health_report's thresholds (proxmoxsafe.Config.Health),
// appended to the settings table (table.go).
func healthSettings() []*setting {
	row := func(flag, env string, def, lo, hi int, dst func(c *Config) *int, doc, help string) *setting {
		return &setting{flag: flag, env: env, def: strconv.Itoa(def), docDefault: "`" + strconv.Itoa(def) + "`", doc: doc, help: help,
			set: func(c *Config, v string) error {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n < lo || n > hi {
					return fmt.Errorf("must be a whole number from %d to %d (got %s)", lo, hi, sanitize.Quote(v))
				}
				*dst(c) = n
				return nil
			}}
	}
	return []*setting{
		row("health-storage-warn", "PROXMOX_SAFE_HEALTH_STORAGE_WARN", proxmoxsafe.DefaultStorageWarnPercent, 1, 100,
			func(c *Config) *int { return &c.Health.StorageWarnPercent },
			"`health_report`: a storage at least this full (percent) is a warning. At most the critical threshold.",
			"health_report: a storage at least this full (percent) is a warning"),
		row("health-storage-critical", "PROXMOX_SAFE_HEALTH_STORAGE_CRITICAL", proxmoxsafe.DefaultStorageCriticalPercent, 1, 100,
			func(c *Config) *int { return &c.Health.StorageCriticalPercent },
			"`health_report`: a storage at least this full (percent) is critical.",
			"health_report: a storage at least this full (percent) is critical"),
		row("health-backup-max-age", "PROXMOX_SAFE_HEALTH_BACKUP_MAX_AGE_DAYS", proxmoxsafe.DefaultBackupMaxAgeDays, 1, 3650,
			func(c *Config) *int { return &c.Health.BackupMaxAgeDays },
			"`health_report`: a guest whose newest backup is older (days) is a warning.",
			"health_report: a guest whose newest backup is older than this many days is a warning"),
		row("health-snapshot-max-age", "PROXMOX_SAFE_HEALTH_SNAPSHOT_MAX_AGE_DAYS", proxmoxsafe.DefaultSnapshotMaxAgeDays, 1, 3650,
			func(c *Config) *int { return &c.Health.SnapshotMaxAgeDays },
			"`health_report`: snapshots older than this (days) are an info finding.",
			"health_report: snapshots older than this many days are an info finding"),
		row("health-wearout", "PROXMOX_SAFE_HEALTH_WEAROUT_PERCENT", proxmoxsafe.DefaultWearoutPercent, 1, 100,
			func(c *Config) *int { return &c.Health.WearoutPercent },
			"`health_report`: a disk with at most this much life left (percent) is worn out, a warning.",
			"health_report: a disk with at most this much life left (percent) is worn out"),
		row("health-guest-reads", "PROXMOX_SAFE_HEALTH_GUEST_READS", proxmoxsafe.DefaultHealthGuestReads, 1, proxmoxsafe.MaxHealthGuestReads,
			func(c *Config) *int { return &c.Health.MaxGuestReads },
			"`health_report` reads at most this many guests' snapshot lists and this many running VMs' configs (by VMID); the others are named in one info finding as not checked.",
			"health_report: at most this many snapshot lists and VM configs per report; the rest are reported as not checked"),
	}
}
