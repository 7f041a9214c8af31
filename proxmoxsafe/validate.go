package proxmoxsafe

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/upid"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// Proxmox's own rules (pve-common src/PVE/JSONSchema.pm). The
// validators use them, and adapters put them in their schemas (mcpserver
// derives its input schemas from the validate tags with these).
const (
	// MinVMID and MaxVMID bound a VMID (pve-vmid).
	MinVMID = 100
	MaxVMID = 999999999
	// NodePattern is pve-node, capped at a DNS label's 63 characters
	// ([MaxNodeLen]).
	NodePattern = `^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`
	// SnapshotNamePattern is pve-configid with pve-snapshot-name's
	// maxLength 40 ([MaxSnapshotNameLen]); names Proxmox reserves per guest
	// type are refused on top of it (see [ValidSnapshotName]).
	SnapshotNamePattern = `^[A-Za-z][A-Za-z0-9_-]{1,39}$`
	// TagPattern is pve-tag, at most [MaxTagLen] characters.
	TagPattern = `^[A-Za-z0-9_][A-Za-z0-9_+.-]{0,63}$`
	// StoragePattern is pve-storage-id (pve-common parse_id: a letter
	// first, a letter or digit last, at least 2 characters), capped at
	// [MaxStorageIDLen].
	StoragePattern = `^[A-Za-z][A-Za-z0-9._-]{0,62}[A-Za-z0-9]$`
	// TaskTypePattern matches Proxmox task types ("qmstart", "vzdump",
	// "move_volume", "hamigrate", …), at most [MaxTaskTypeLen] characters.
	TaskTypePattern = `^[A-Za-z][A-Za-z0-9_-]{0,63}$`
	// UPIDPattern is the UPID decode regex of pve-common's UPID.pm. The
	// validator also refuses UPIDs Proxmox could not have produced (longer
	// than [MaxUPIDLen], invalid UTF-8).
	UPIDPattern = upid.Pattern
)

// Length limits of the validate tags (max=…): a reflection test checks
// that every tag names one of these.
const (
	MaxNodeLen         = 63
	MaxSnapshotNameLen = 40
	MaxTagLen          = 64
	MaxStorageIDLen    = 64
	MaxTaskTypeLen     = 64
	// MaxApprovalLen caps approval text.
	MaxApprovalLen = 256
	// MaxSnapshotDescriptionLen caps the description of a new snapshot.
	MaxSnapshotDescriptionLen = 1024
	// MaxNameFilterLen caps ListGuestsInput.Name.
	MaxNameFilterLen = 128
	// MaxCursorLen caps ListGuestsInput.Cursor.
	MaxCursorLen = 64
)

const (
	minVMID = MinVMID
	maxVMID = MaxVMID
)

var (
	snapnameRe = lazyre.New(SnapshotNamePattern)
	tagRe      = lazyre.New(TagPattern)
	taskTypeRe = lazyre.New(TaskTypePattern)
	storageRe  = lazyre.New(StoragePattern)
)

// ValidStorage reports whether s is a valid Proxmox storage id.
func ValidStorage(s string) bool { return storageRe.MatchString(s) }

// reservedSnapshotNames are refused by Proxmox per guest type (compared
// case-insensitively, as Proxmox does).
var reservedSnapshotNames = map[GuestType][]string{
	TypeQEMU: {"current", "pending"},
	TypeLXC:  {"current", "vzdump"},
}

// ValidNode reports whether s is a valid Proxmox node name
// ([NodePattern]: letters and digits, hyphens inside, at most
// [MaxNodeLen] bytes). It is written out instead of matching the pattern:
// the binary checks the operator's node allowlist on every start, and
// compiling the pattern cost more there than the whole check, which a
// server pays before it can answer its first request.
// FuzzValidators and TestValidNodeIsNodePattern hold it to the pattern.
func ValidNode(s string) bool {
	if len(s) == 0 || len(s) > MaxNodeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' && i > 0 && i < len(s)-1:
		default:
			return false
		}
	}
	return true
}

// ValidVMID reports whether id is in Proxmox's VMID range 100…999999999.
func ValidVMID(id int) bool { return id >= minVMID && id <= maxVMID }

// ValidSnapshotName reports whether name is a valid, non-reserved snapshot
// name for guests of type t.
func ValidSnapshotName(t GuestType, name string) bool {
	return snapnameRe.MatchString(name) && !reservedSnapshot(t, name)
}

func reservedSnapshot(t GuestType, name string) bool {
	for _, r := range reservedSnapshotNames[t] {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return false
}

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return f.Name
		}
		return name
	})
	must := func(err error) {
		if err != nil {
			panic(err) // programmer error at start-up
		}
	}
	v.RegisterStructValidation(validateControls, Controls{}) // controls.go
	must(v.RegisterValidation("pve_node", func(fl validator.FieldLevel) bool { return ValidNode(fl.Field().String()) }))
	must(v.RegisterValidation("pve_vmid", func(fl validator.FieldLevel) bool { return ValidVMID(int(fl.Field().Int())) }))
	must(v.RegisterValidation("pve_snapname", func(fl validator.FieldLevel) bool { return snapnameRe.MatchString(fl.Field().String()) }))
	must(v.RegisterValidation("pve_tag", func(fl validator.FieldLevel) bool { return tagRe.MatchString(fl.Field().String()) }))
	must(v.RegisterValidation("pve_storage", func(fl validator.FieldLevel) bool { return storageRe.MatchString(fl.Field().String()) }))
	must(v.RegisterValidation("pve_text", func(fl validator.FieldLevel) bool { return sanitize.Clean(fl.Field().String()) }))
	must(v.RegisterValidation("pve_upid", func(fl validator.FieldLevel) bool {
		_, err := upid.Parse(fl.Field().String())
		return err == nil
	}))
	must(v.RegisterValidation("pve_tasktype", func(fl validator.FieldLevel) bool { return taskTypeRe.MatchString(fl.Field().String()) }))
	// A task is read from the node its UPID names; a different node would
	// be a request Proxmox answers with an error, or a forwarding detour.
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		node, id := sl.Current().FieldByName("Node").String(), sl.Current().FieldByName("UPID").String()
		if u, err := upid.Parse(id); err == nil && ValidNode(node) && u.Node != node {
			sl.ReportError(node, "node", "Node", "upid_node", u.Node)
		}
	}, TaskStateInput{}, TaskLogInput{})
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		in := sl.Current().Interface().(SnapshotGuestInput)
		if reservedSnapshot(in.Type, in.Name) {
			sl.ReportError(in.Name, "snapname", "Name", "pve_snapname_reserved", "")
		}
		if in.VMState && in.Type == TypeLXC {
			sl.ReportError(in.VMState, "vmstate", "VMState", "qemu_only", "")
		}
	}, SnapshotGuestInput{})
	// "current" is the snapshot list's pseudo-entry (the present state),
	// not a snapshot: nothing can be rolled back to or deleted by it.
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		if name := sl.Current().FieldByName("Name").String(); strings.EqualFold(name, "current") {
			sl.ReportError(name, "snapname", "Name", "pve_snapname_reserved", "")
		}
	}, RollbackSnapshotInput{}, DeleteSnapshotInput{})
	registerProvision(v, must) // guest_provision_validate.go
	registerBackup(v, must)    // backup_validate.go
	v.RegisterStructValidation(validateMigrate, MigrateGuestInput{})
	v.RegisterStructValidation(validateMetricsTarget, MetricsHistoryInput{}) // metrics_history.go
	return v
}

// inputValidator is the one validator of this package; validator.Validate
// is safe for concurrent use and caches per-type metadata.
var inputValidator = sync.OnceValue(newValidator)

// Validate checks an input struct (one of this package's *Input types, or a
// struct that embeds one) against Proxmox's rules, as every operation does
// before any I/O. It returns nil or a *[ValidationError] naming every
// invalid field. Policy (allowed nodes, classes) is not checked here.
func Validate(in any) error { return check(inputValidator(), in) }

// check validates an input struct and turns validator's errors into a
// *ValidationError that says, per field, what is wrong in plain words.
func (c *Client) check(in any) error { return check(c.validate, in) }

func check(v *validator.Validate, in any) error {
	err := v.Struct(in)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return &ValidationError{Fields: []FieldError{{Field: "input", Problem: "cannot be validated"}}}
	}
	out := &ValidationError{}
	for _, fe := range verrs {
		out.Fields = append(out.Fields, FieldError{Field: fe.Field(), Problem: problem(fe), Rule: fe.Tag()})
	}
	return out
}

func problem(fe validator.FieldError) string {
	if p, ok := provisionProblems[fe.Tag()]; ok {
		return p
	}
	if p, ok := backupProblems[fe.Tag()]; ok {
		return p
	}
	if p, ok := metricsProblems[fe.Tag()]; ok {
		return p
	}
	switch fe.Tag() {
	case "required":
		return "is required"
	case "pve_node":
		return "must be a Proxmox node name (letters, digits and '-', not starting or ending with '-', at most 63 characters)"
	case "pve_vmid":
		return fmt.Sprintf("must be a VMID from %d to %d", minVMID, maxVMID)
	case "pve_snapname":
		return "must start with a letter and have 2 to 40 letters, digits, '_' or '-'"
	case "pve_snapname_reserved":
		return "is a name Proxmox reserves for this guest type (qemu: current, pending; lxc: current, vzdump)"
	case "pve_upid":
		return "is not a valid UPID (UPID:node:pid:pstart:starttime:type:id:user:)"
	case "upid_node":
		return "does not match the node named in the UPID (" + fe.Param() + ")"
	case "pve_tasktype":
		return "must be a Proxmox task type such as qmstart or vzdump (a letter, then letters, digits, '_' or '-')"
	case "qemu_only":
		return "is only supported for qemu guests"
	case "lxc_only":
		return "is only supported for lxc guests"
	case "not_source":
		return "must be another node than the one the guest is on (node)"
	case "lxc_no_live":
		return "is not possible for a container: Proxmox has not implemented live migration of containers (the task would fail); use restart"
	case "restart_only":
		return "is only accepted with restart (it is restart mode's shutdown timeout)"
	case "pve_storage":
		return "must be a Proxmox storage id (a letter, then letters, digits, '.', '_' or '-', ending with a letter or digit; 2 to 64 characters)"
	case "pve_tag":
		return "must be a Proxmox tag (letters, digits, '_', '-', '+', '.'; at most 64 characters)"
	case "pve_text":
		return "must not contain control, zero-width or bidirectional-override characters"
	case "oneof":
		return "must be one of: " + strings.ReplaceAll(fe.Param(), " ", ", ")
	case "max":
		if fe.Kind() == reflect.String {
			return "must be at most " + fe.Param() + " characters long"
		}
		return "must be at most " + fe.Param()
	case "min":
		return "must be at least " + fe.Param()
	case "printascii":
		return "must contain printable ASCII only"
	}
	return "is invalid (" + fe.Tag() + ")"
}

// validateMigrate holds the rules of [MigrateGuestInput] that span
// fields: the target is not the source, and each mode option belongs to
// its guest type (QEMU online and local disks, LXC restart and timeout).
func validateMigrate(sl validator.StructLevel) {
	in := sl.Current().Interface().(MigrateGuestInput)
	if in.TargetNode != "" && in.TargetNode == in.Node {
		sl.ReportError(in.TargetNode, "target", "TargetNode", "not_source", "")
	}
	switch in.Type {
	case TypeQEMU:
		if in.Restart {
			sl.ReportError(in.Restart, "restart", "Restart", "lxc_only", "")
		}
	case TypeLXC:
		if in.Online {
			sl.ReportError(in.Online, "online", "Online", "lxc_no_live", "")
		}
		if in.WithLocalDisks {
			sl.ReportError(in.WithLocalDisks, "with_local_disks", "WithLocalDisks", "qemu_only", "")
		}
	}
	if in.Timeout != 0 && !in.Restart {
		sl.ReportError(in.Timeout, "timeout", "Timeout", "restart_only", "")
	}
}

// Limits of the config class's inputs.
const (
	// MaxDiskKeyLen caps ResizeDiskInput.Disk ("virtio15", "mp255").
	MaxDiskKeyLen = 16
	// MaxResizeSizeLen caps ResizeDiskInput.Size.
	MaxResizeSizeLen = 24
	// MaxConfigChanges caps the keys one SetGuestConfig call sets, and
	// those it deletes.
	MaxConfigChanges = 32
	// MaxConfigKeyLen caps a config key's name.
	MaxConfigKeyLen = 64
	// MaxConfigApprovalLen caps SetGuestConfigInput.Approval: its phrase
	// names every key and value.
	MaxConfigApprovalLen = 4096
)
