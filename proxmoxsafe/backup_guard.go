package proxmoxsafe

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// The recent-backup guard (Policy.RecentBackup): "back it up, then do
// it" as a rule the operator can switch on. For the operations that lose
// or rewrite a guest's state, the pipeline reads the guest's newest
// backup with its other fresh reads and refuses, before any approval,
// when there is none newer than the class's maximum age.

// RecentBackupClasses are the classes [Policy.RecentBackup] may name,
// and the operations of each it guards: destroy ([Client.DestroyGuest]),
// snapshot-admin ([Client.RollbackSnapshot]) and config
// ([Client.SetGuestConfig], [Client.ResizeDisk]). A backup volume's
// delete, a snapshot's delete and the other classes lose no state of the
// guest itself.
func RecentBackupClasses() []Class {
	return []Class{ClassDestroy, ClassSnapshotAdmin, ClassConfig}
}

// backupGuarded are the operations the guard applies to, by class.
var backupGuarded = map[Operation]Class{
	OpDestroyGuest:     ClassDestroy,
	OpRollbackSnapshot: ClassSnapshotAdmin,
	OpSetGuestConfig:   ClassConfig,
	OpResizeDisk:       ClassConfig,
}

// MaxRecentBackupAge bounds a [Policy.RecentBackup] age (ten years).
const MaxRecentBackupAge = 10 * 365 * 24 * time.Hour

// compileRecentBackup checks [Policy.RecentBackup]: only the classes of
// [RecentBackupClasses], each with an age from one minute to
// [MaxRecentBackupAge].
func compileRecentBackup(in map[Class]time.Duration) (map[Class]time.Duration, error) {
	out := map[Class]time.Duration{}
	for cl, d := range in {
		if !slices.Contains(RecentBackupClasses(), cl) {
			return nil, configError("Policy.RecentBackup", "Policy.RecentBackup: class %s has no operation the guard applies to (it applies to destroy, snapshot-admin and config)", sanitize.Quote(cl))
		}
		if d < time.Minute || d > MaxRecentBackupAge {
			return nil, configError("Policy.RecentBackup", "Policy.RecentBackup: the age for %s must be from 1m to %s (got %s); leave the class out for no guard", cl, MaxRecentBackupAge, d)
		}
		out[cl] = d
	}
	return out, nil
}

// RecentBackupAge returns the maximum backup age the guard requires
// before the class's guarded operations, and false when the class is not
// guarded.
func (p Policy) RecentBackupAge(cl Class) (time.Duration, bool) {
	d, ok := p.RecentBackup[cl]
	return d, ok && d > 0
}

// backupGuardAge is the age m's guest's newest backup must be under; 0
// when the guard does not apply to m.
func (c *Client) backupGuardAge(m *mutation) time.Duration {
	cl, ok := backupGuarded[m.name()]
	if !ok || m.target.VMID == 0 {
		return 0
	}
	return c.policy.recentBackup[cl]
}

// newestBackup is a guest's newest backup as the guard found it.
type newestBackup struct {
	found   bool
	backup  BackupInfo
	storage string
	// storages are the backup storages read.
	storages []string
}

// newestBackupOf reads the guest's backups on every enabled, active
// backup storage its node lists and returns the newest.
func (c *Client) newestBackupOf(ctx context.Context, t Target) (newestBackup, error) {
	var out newestBackup
	list, err := c.nodeStorages(ctx, t.Node)
	if err != nil {
		return out, err
	}
	for _, st := range list {
		if !st.enabled || !st.active || !slices.Contains(st.content, "backup") {
			continue
		}
		out.storages = append(out.storages, st.id)
		res, err := c.ListBackups(ctx, ListBackupsInput{Node: t.Node, Storage: st.id, VMID: t.VMID, Limit: 1})
		if err != nil {
			return out, err
		}
		if len(res.Backups) > 0 && (!out.found || res.Backups[0].Time.After(out.backup.Time)) {
			out.found, out.backup, out.storage = true, res.Backups[0], st.id
		}
	}
	return out, nil
}

// checkRecentBackup refuses when the guest's newest backup is older than
// maxAge (or there is none), naming what it found and what to do.
func checkRecentBackup(m *mutation, nb newestBackup, maxAge time.Duration, now time.Time) error {
	cl := backupGuarded[m.name()]
	guest := m.target.Node + "/" + string(m.target.Type) + "/" + strconv.Itoa(m.target.VMID)
	todo := fmt.Sprintf("back the guest up first (BackupGuest, the backup_create tool), then ask again; the operator requires a backup newer than %s before a %s (class %s)", humanAge(maxAge), m.action, cl)
	if !nb.found {
		where := "no backup storage is enabled and active on node " + m.target.Node
		if len(nb.storages) > 0 {
			where = "none on the backup storages of node " + m.target.Node + " (" + strings.Join(nb.storages, ", ") + "), or none the token may list (Datastore.AllocateSpace on the storage and VM.Backup on the guest)"
		}
		return refuse(ErrPrecondition, "guest %s has no backup: %s; %s", guest, where, todo)
	}
	age := now.Sub(nb.backup.Time)
	if age < maxAge {
		return nil
	}
	return refuse(ErrPrecondition, "guest %s's newest backup is %s old (%s, made %s): %s", guest, humanAge(age), nb.backup.VolID, nb.backup.Time.UTC().Format(time.RFC3339), todo)
}

// humanAge writes a duration in days, hours or minutes.
func humanAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	case d >= 2*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	default:
		return strconv.Itoa(max(int(d/time.Minute), 0)) + " minutes"
	}
}
