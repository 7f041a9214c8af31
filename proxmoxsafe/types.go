package proxmoxsafe

import (
	"strconv"
	"time"
)

// GuestType is the kind of guest: a QEMU virtual machine or an LXC container.
type GuestType string

// The two guest types Proxmox VE knows. Nothing else is accepted.
const (
	TypeQEMU GuestType = "qemu"
	TypeLXC  GuestType = "lxc"
)

// PowerAction is one of the power actions [Client.GuestPower] performs.
type PowerAction string

// The power actions of the "power" mutation class.
const (
	// ActionStart boots a stopped guest.
	ActionStart PowerAction = "start"
	// ActionShutdown asks the guest OS to shut down (ACPI or guest agent for
	// QEMU, init for LXC).
	ActionShutdown PowerAction = "shutdown"
	// ActionReboot asks the guest OS to reboot.
	ActionReboot PowerAction = "reboot"
	// ActionStop cuts the power: the guest OS gets no chance to shut down.
	ActionStop PowerAction = "stop"
)

// PowerActions returns every action [Client.GuestPower] accepts, in a
// stable order. The slice is new on every call.
func PowerActions() []PowerAction {
	return []PowerAction{ActionStart, ActionShutdown, ActionReboot, ActionStop}
}

// Class names a group of mutations an operator enables as a whole.
// Every class is off unless the [Policy] enables it.
type Class string

// The mutation classes this version implements.
const (
	// ClassPower covers start, shutdown, reboot and stop.
	ClassPower Class = "power"
	// ClassSnapshot covers creating a snapshot.
	ClassSnapshot Class = "snapshot"
	// ClassSnapshotAdmin covers deleting a named snapshot
	// ([Client.DeleteSnapshot]) and rolling back to one
	// ([Client.RollbackSnapshot]).
	ClassSnapshotAdmin Class = "snapshot-admin"
	// ClassResponder covers the narrow self-healing operations of an
	// unattended responder: [Client.StartGuest] (only a stopped guest),
	// [Client.RebootGuest] (only after the minimum uptime),
	// [Client.ResetGuest] (QEMU only, only when its guest agent no longer
	// answers) and [Client.CleanupSnapshots] (the retention policy).
	ClassResponder Class = "responder"
	// ClassPowerExtra covers suspending (pause or hibernate) and resuming
	// a QEMU VM ([Client.SuspendGuest], [Client.ResumeGuest]).
	ClassPowerExtra Class = "power-extra"
	// ClassProvision covers bringing guests into being: cloning a guest
	// ([Client.CloneGuest]) and creating a QEMU VM ([Client.CreateVM]) or
	// an LXC container ([Client.CreateContainer]).
	ClassProvision Class = "provision"
	// ClassConfig covers growing a disk ([Client.ResizeDisk]) and setting
	// the config keys on the operator's allowlist ([Client.SetGuestConfig],
	// [Policy.ConfigKeys]).
	ClassConfig Class = "config"
	// ClassGateway covers [Client.APIGet]: a GET of any API path the token
	// can read, outside the gateway's deny list (internal/routes). It
	// changes nothing, so read-only mode keeps it and it needs no audit
	// sink or approval beyond being enabled.
	ClassGateway Class = "gateway"
	// ClassGatewayWrite covers [Client.APIRequest]: a POST, PUT or DELETE
	// of any API path outside the deny list, approved for the exact
	// method, path and parameters and audited before it is sent. No
	// profile enables it: the operator must name it.
	ClassGatewayWrite Class = "gateway-write"
	// ClassDestroy covers deleting a guest with its disks
	// ([Client.DestroyGuest]) and deleting a backup volume
	// ([Client.DeleteBackup]). It destroys without a way back, so its
	// default approval is one only a person can give ([DefaultApprovals]).
	ClassDestroy Class = "destroy"
	// ClassMigrate covers moving a guest to another node
	// ([Client.MigrateGuest]).
	ClassMigrate Class = "migrate"
	// ClassBackup covers backing up one guest to a storage
	// ([Client.BackupGuest], vzdump). It adds a backup and never removes
	// one: older backups are not pruned by it.
	ClassBackup Class = "backup"
	// ClassRestore covers restoring a backup to a new guest
	// ([Client.RestoreBackup]). Restoring over an existing guest is not
	// offered by any class (docs/ARCHITECTURE.md, "Backups").
	ClassRestore Class = "restore"
)

// classOrder lists every class this version implements, in the order
// policies report them.
var classOrder = []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassResponder, ClassPowerExtra, ClassProvision, ClassDestroy, ClassMigrate, ClassConfig, ClassBackup, ClassRestore, ClassGateway, ClassGatewayWrite}

// readClasses are the classes whose operations change nothing: read-only
// mode keeps them, and they need no audit sink.
var readClasses = map[Class]bool{ClassGateway: true}

// Target names one guest, or one snapshot of a guest, exactly as the approval
// phrase spells it: node/type/vmid[/snapshot].
type Target struct {
	Node     string    `json:"node"`
	Type     GuestType `json:"type"`
	VMID     int       `json:"vmid"`
	Snapshot string    `json:"snapname,omitempty"`
}

// String returns the target as it appears in approval phrases, e.g.
// "pve1/qemu/101" or "pve1/qemu/101/before-upgrade".
func (t Target) String() string {
	s := t.Node + "/" + string(t.Type) + "/" + strconv.Itoa(t.VMID)
	if t.Snapshot != "" {
		s += "/" + t.Snapshot
	}
	return s
}

// GuestRef names one guest for the per-guest reads ([Client.GuestStatus],
// [Client.GuestConfig], [Client.ListSnapshots]).
type GuestRef struct {
	// Node must be on the policy's node allowlist.
	// The three need no description in a tool's schema: their names, the
	// type's enum and the tool's own words say it all.
	Node string    `json:"node" validate:"required,pve_node"`
	Type GuestType `json:"type" validate:"required,oneof=qemu lxc"`
	VMID int       `json:"vmid" validate:"required,pve_vmid"`
}

// Target returns the guest the input names.
func (in GuestRef) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// GuestState is what a mutation read from status/current right before it
// decided whether to act. It is shown to the approver and kept in receipts.
type GuestState struct {
	// Status is "running" or "stopped" (a paused VM is "running").
	Status string `json:"status"`
	// QMPStatus is QEMU's own view ("running", "paused", …); empty for LXC.
	QMPStatus string `json:"qmpstatus,omitempty"`
	// Name is the guest's name, sanitized.
	Name string `json:"name,omitempty"`
	// Lock is the config lock ("backup", "snapshot", …), empty when unlocked.
	Lock string `json:"lock,omitempty"`
	// Template is true for templates, which cannot be started or snapshotted.
	Template bool `json:"template"`
	// HAManaged is true when the HA manager owns the guest's power state.
	HAManaged bool `json:"ha_managed"`
	// HAState is the HA manager's state of the resource when HAManaged
	// ("started", "stopped", "request_stop", "fence", "error", …: the
	// service state status/current reports, not the requested state of
	// resources.cfg).
	HAState string `json:"ha_state,omitempty"`
	// Uptime is how long the guest has been running (zero when stopped),
	// as status/current reported it. Reboots and resets check it against
	// the minimum uptime ([Policy.MinUptime]).
	Uptime time.Duration `json:"-"`
}

// Paused reports whether a running QEMU guest is paused.
func (s GuestState) Paused() bool { return s.QMPStatus == "paused" }
