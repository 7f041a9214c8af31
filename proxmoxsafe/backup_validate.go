package proxmoxsafe

import (
	"github.com/go-playground/validator/v10"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// BackupVolumePattern is a backup volume id: a vzdump archive on a file
// storage (storage:backup/vzdump-<type>-<vmid>-<time>.<format>) or a
// snapshot on a Proxmox Backup Server storage
// (storage:backup/<vm|ct>/<vmid>/<RFC 3339 time>), at most
// [MaxVolumeIDLen].
const BackupVolumePattern = `^[A-Za-z][A-Za-z0-9._-]*[A-Za-z0-9]:backup/(vzdump-(qemu|lxc|openvz)-[0-9]+-[0-9]{4}_[0-9]{2}_[0-9]{2}-[0-9]{2}_[0-9]{2}_[0-9]{2}\.(vma|tar|tgz)(\.(zst|gz|lzo|bz2|xz))?|(vm|ct)/[0-9]+/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)$`

var (
	backupNotesRe  = lazyre.New(BackupNotesPattern)
	backupVolumeRe = lazyre.New(BackupVolumePattern)
)

// backupProblems say in plain words what the backup rules want.
var backupProblems = map[string]string{
	"pve_backupnotes":  "must be one line without backslashes or braces, except the variables {{cluster}}, {{guestname}}, {{node}} and {{vmid}}",
	"pve_backupvolume": "must be a backup volume id: storage:backup/vzdump-<qemu|lxc>-<vmid>-<YYYY_MM_DD-hh_mm_ss>.<format>, or storage:backup/<vm|ct>/<vmid>/<time> on a Proxmox Backup Server",
}

// registerBackup adds the backup formats to v.
func registerBackup(v *validator.Validate, must func(error)) {
	must(v.RegisterValidation("pve_backupnotes", func(fl validator.FieldLevel) bool { return backupNotesRe.MatchString(fl.Field().String()) }))
	must(v.RegisterValidation("pve_backupvolume", func(fl validator.FieldLevel) bool { return backupVolumeRe.MatchString(fl.Field().String()) }))
}
