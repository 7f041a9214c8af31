package proxmoxsafe

import (
	"fmt"
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
	// ([Client.DeleteSnapshot]).
	ClassSnapshotAdmin Class = "snapshot-admin"
	// ClassResponder covers the guarded self-healing operations of an
	// unattended responder: [Client.StartGuest] (only a stopped guest),
	// [Client.RebootGuest] (only after the minimum uptime),
	// [Client.ResetGuest] (QEMU only, only when its guest agent no longer
	// answers) and [Client.CleanupSnapshots] (the retention policy).
	ClassResponder Class = "responder"
)

// classOrder lists every class this version implements, in the order
// policies report them.
var classOrder = []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassResponder}

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
	Node string    `json:"node" validate:"required,pve_node" jsonschema:"Node the guest is on. It must be on the operator's node allowlist."`
	Type GuestType `json:"type" validate:"required,oneof=qemu lxc" jsonschema:"Guest type: qemu (VM) or lxc (container)."`
	VMID int       `json:"vmid" validate:"required,pve_vmid" jsonschema:"The guest's VMID."`
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
	// HAState is the HA resource's requested state when HAManaged.
	HAState string `json:"ha_state,omitempty"`
	// Uptime is how long the guest has been running (zero when stopped),
	// as status/current reported it. It guards reboots and resets
	// ([Policy.MinUptime]).
	Uptime time.Duration `json:"-"`
}

// Paused reports whether a running QEMU guest is paused.
func (s GuestState) Paused() bool { return s.QMPStatus == "paused" }

// ClusterStatusResult is what [Client.ClusterStatus] returns.
type ClusterStatusResult struct {
	// Name is the cluster name; empty for a standalone node.
	Name string `json:"name"`
	// Clustered is false for a standalone node (no corosync cluster).
	Clustered bool `json:"clustered"`
	// Quorate is true when the cluster has quorum. A standalone node is
	// always quorate.
	Quorate bool `json:"quorate"`
	// Version is the Proxmox VE version of the node that answered, e.g. "9.1.1".
	Version string `json:"version"`
	// Nodes lists every cluster member, ordered by name.
	Nodes []ClusterNode `json:"nodes"`
	// Warnings name what could not be read (e.g. usage figures); the rest
	// of the result is still valid. Empty when everything was read.
	Warnings []string `json:"warnings"`
}

// ClusterNode is one member of the cluster as /cluster/status reports it.
type ClusterNode struct {
	Name   string `json:"name"`
	NodeID int    `json:"nodeid"`
	Online bool   `json:"online"`
	IP     string `json:"ip,omitempty"`
	// Level is the subscription level ("c", "b", "s", "p"), empty without one.
	Level string `json:"level,omitempty"`
	// Local is true for the node that answered the API request.
	Local bool `json:"local"`
	// Usage is the node's CPU, memory, root disk and uptime from
	// /cluster/resources; absent when the node is offline, when the token
	// lacks Sys.Audit on it, or when the figures could not be read.
	Usage *NodeUsage `json:"usage,omitempty"`
	// Problem says in a few words why the node is offline or has no usage
	// figures; empty for a healthy node.
	Problem string `json:"problem,omitempty"`
}

// NodeStatusInput selects the node [Client.NodeStatus] reports on.
type NodeStatusInput struct {
	// Node must be on the policy's node allowlist.
	Node string `json:"node" validate:"required,pve_node" jsonschema:"Name of the node to report on. It must be on the operator's node allowlist."`
}

// NodeStatusResult is what [Client.NodeStatus] returns. Sizes are bytes.
type NodeStatusResult struct {
	Node string `json:"node"`
	// Uptime is in seconds.
	Uptime int64 `json:"uptime"`
	// CPU is the current CPU usage as a fraction of all cores (0…1).
	CPU float64 `json:"cpu"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// CPUModel is the CPU model name, sanitized.
	CPUModel string `json:"cpu_model,omitempty"`
	// LoadAvg holds the 1, 5 and 15 minute load averages.
	LoadAvg [3]float64 `json:"loadavg"`
	Memory  Usage      `json:"memory"`
	Swap    Usage      `json:"swap"`
	RootFS  Usage      `json:"rootfs"`
	// Kernel is the running kernel release, e.g. "6.8.12-4-pve".
	Kernel string `json:"kernel,omitempty"`
	// PVEVersion is the node's pve-manager version string.
	PVEVersion string `json:"pve_version,omitempty"`
}

// Usage is a used/total pair in bytes.
type Usage struct {
	Used  uint64 `json:"used"`
	Total uint64 `json:"total"`
}

// ListGuestsInput filters and pages [Client.ListGuests]. The zero value lists
// the first [DefaultListLimit] guests of the whole cluster.
type ListGuestsInput struct {
	// Node keeps only guests on this node.
	Node string `json:"node,omitempty" validate:"omitempty,pve_node" jsonschema:"Only guests on this node."`
	// Type keeps only "qemu" or only "lxc" guests.
	Type GuestType `json:"type,omitempty" validate:"omitempty,oneof=qemu lxc" jsonschema:"Only QEMU VMs (qemu) or only LXC containers (lxc)."`
	// Status keeps only guests in this state ("running", "stopped", "unknown").
	Status string `json:"status,omitempty" validate:"omitempty,oneof=running stopped unknown" jsonschema:"Only guests in this state."`
	// Tag keeps only guests carrying this tag (exact, case-insensitive).
	Tag string `json:"tag,omitempty" validate:"omitempty,pve_tag" jsonschema:"Only guests carrying this tag (exact match, case-insensitive)."`
	// Name keeps only guests whose name contains this text (case-insensitive).
	Name string `json:"name,omitempty" validate:"omitempty,max=128,printascii" jsonschema:"Only guests whose name contains this text (case-insensitive, printable ASCII)."`
	// Limit caps the page size; 0 means [DefaultListLimit]; at most [MaxListLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Page size: at most this many guests (0 or absent means 200)."`
	// Cursor continues a listing from [ListGuestsResult.NextCursor].
	Cursor string `json:"cursor,omitempty" validate:"omitempty,max=64,printascii" jsonschema:"The next_cursor of the previous page, to continue a listing."`
}

// Default and maximum page sizes of [Client.ListGuests].
const (
	DefaultListLimit = 200
	MaxListLimit     = 1000
)

// ListGuestsResult is one page of guests, ordered by VMID.
type ListGuestsResult struct {
	Guests []Guest `json:"guests"`
	// Total counts every guest that matched the filters, on all pages.
	Total int `json:"total"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Guest is one QEMU VM or LXC container as /cluster/resources reports it.
// Sizes are bytes, times seconds; strings are sanitized.
type Guest struct {
	VMID     int       `json:"vmid"`
	Name     string    `json:"name"`
	Node     string    `json:"node"`
	Type     GuestType `json:"type"`
	Status   string    `json:"status"`
	Template bool      `json:"template"`
	Lock     string    `json:"lock,omitempty"`
	Tags     []string  `json:"tags"`
	// HAState is the HA manager's state for the guest, empty when unmanaged.
	HAState string  `json:"hastate,omitempty"`
	CPU     float64 `json:"cpu"`
	MaxCPU  int     `json:"maxcpu"`
	Mem     uint64  `json:"mem"`
	MaxMem  uint64  `json:"maxmem"`
	Disk    uint64  `json:"disk"`
	MaxDisk uint64  `json:"maxdisk"`
	Uptime  int64   `json:"uptime"`
	// Manageable reports whether the current policy would let a mutation
	// target this guest (node allowlisted, guest not protected, some
	// mutation class enabled). It says nothing about the guest's state.
	Manageable bool `json:"manageable"`
	// Protected is true when the operator protects the guest (by VMID,
	// name, tag or pool): no mutation may touch it.
	Protected bool `json:"protected"`
}

// GuestPowerInput is a request to change a guest's power state.
type GuestPowerInput struct {
	Node   string      `json:"node" validate:"required,pve_node" jsonschema:"Node the guest runs on. It must be on the operator's node allowlist."`
	Type   GuestType   `json:"type" validate:"required,oneof=qemu lxc" jsonschema:"Guest type: qemu (VM) or lxc (container)."`
	VMID   int         `json:"vmid" validate:"required,pve_vmid" jsonschema:"The guest's VMID."`
	Action PowerAction `json:"action" validate:"required,oneof=start shutdown reboot stop" jsonschema:"start boots a stopped guest; shutdown asks the guest OS to shut down cleanly; reboot asks it to reboot; stop cuts the power at once (unsaved data may be lost)."`
	// Approval must be exactly [GuestPowerInput.ApprovalPhrase].
	Approval string `json:"approval,omitempty" validate:"max=256" jsonschema:"Exactly \"APPROVE <action> <node>/<type>/<vmid>\", e.g. \"APPROVE shutdown pve1/qemu/101\". Omit it on the first call: the refusal gives the exact phrase, the guest's current state and the effect, for the user to approve."`
	// Wait, when set, makes GuestPower wait for the task and verify the
	// guest's power state before returning; see [Client.Verify]. nil
	// returns the receipt at submission.
	Wait *WaitOptions `json:"-"`
}

// Target returns the guest the input names.
func (in GuestPowerInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// ApprovalPhrase returns the phrase that approves this input:
// [ApprovalPhrase] for its action and guest. No other field changes what
// a power action does (Wait only changes how long the call waits).
func (in GuestPowerInput) ApprovalPhrase() string {
	return ApprovalPhrase(string(in.Action), in.Target())
}

// SnapshotGuestInput is a request to take a snapshot of a guest.
type SnapshotGuestInput struct {
	Node string    `json:"node" validate:"required,pve_node" jsonschema:"Node the guest runs on. It must be on the operator's node allowlist."`
	Type GuestType `json:"type" validate:"required,oneof=qemu lxc" jsonschema:"Guest type: qemu (VM) or lxc (container)."`
	VMID int       `json:"vmid" validate:"required,pve_vmid" jsonschema:"The guest's VMID."`
	// Name is the snapshot name: a letter, then 1 to 39 letters, digits,
	// '_' or '-'; not a name Proxmox reserves.
	Name string `json:"snapname" validate:"required,pve_snapname" jsonschema:"Name of the new snapshot: a letter, then 1 to 39 letters, digits, '_' or '-'. Reserved: current (any type), pending (qemu), vzdump (lxc)."`
	// Description is free text stored with the snapshot (no control characters).
	Description string `json:"description,omitempty" validate:"max=1024,pve_text" jsonschema:"Free text stored with the snapshot (no control, zero-width or bidirectional characters)."`
	// VMState also saves the VM's RAM. QEMU only.
	VMState bool `json:"vmstate,omitempty" jsonschema:"Also save the VM's memory (qemu only)."`
	// Approval must be exactly [SnapshotGuestInput.ApprovalPhrase]: "snapshot",
	// the target including the snapshot name, and " vmstate=1" with VMState.
	Approval string `json:"approval,omitempty" validate:"max=256" jsonschema:"Exactly \"APPROVE snapshot <node>/<type>/<vmid>/<snapname>\", followed by \" vmstate=1\" when vmstate is true, e.g. \"APPROVE snapshot pve1/qemu/101/before-upgrade\". Omit it on the first call: the refusal gives the exact phrase, the guest's current state and the effect, for the user to approve."`
	// Wait, when set, makes SnapshotGuest wait for the task and check that
	// the snapshot is listed before returning; see [Client.Verify]. nil
	// returns the receipt at submission.
	Wait *WaitOptions `json:"-"`
}

// Target returns the snapshot the input names.
func (in SnapshotGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID, Snapshot: in.Name}
}

// ApprovalPhrase returns the phrase that approves this input:
// [ApprovalPhrase] for "snapshot", the snapshot's target and, when VMState
// is set, "vmstate=1", so approving a plain snapshot never approves saving
// the VM's memory (or the reverse). Description is not part of it: it is
// free text stored with the snapshot and changes nothing on the guest.
func (in SnapshotGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("snapshot", in.Target(), in.approvalParams()...)
}

// approvalParams are the parameters that change what the snapshot does.
func (in SnapshotGuestInput) approvalParams() []ApprovalParam {
	if in.VMState {
		return []ApprovalParam{{Name: "vmstate", Value: "1"}}
	}
	return nil
}

// Receipt says a mutation was submitted. It is not proof that it happened:
// the task may still fail, and for HA-managed guests the HA manager carries
// the change out later. Use [Client.Verify] (or the input's Wait field) to
// learn the outcome.
type Receipt struct {
	// UPID identifies the Proxmox task that carries the mutation out.
	UPID string `json:"upid"`
	// Task is the parsed UPID.
	Task TaskRef `json:"task"`
	// Action is the mutation, e.g. "shutdown" or "snapshot".
	Action string `json:"action"`
	// Target is the guest (or snapshot) acted on.
	Target Target `json:"target"`
	// Before is the guest state read just before submitting.
	Before GuestState `json:"before"`
	// HAManaged is true when the HA manager will carry the change out; the
	// task then ends before the guest changes state.
	HAManaged bool `json:"ha_managed"`
	// Note is a short human-readable remark, e.g. about HA.
	Note string `json:"note,omitempty"`
	// Outcome is set only when the input asked to wait (its Wait field):
	// what [Client.Verify] established after submission.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// TaskRef is a parsed UPID.
type TaskRef struct {
	Node string `json:"node"`
	// Type is the task type, e.g. "qmstart", "vzshutdown", "hastart".
	Type string `json:"type"`
	// ID is usually the VMID; it may be empty.
	ID        string    `json:"id"`
	User      string    `json:"user"`
	StartTime time.Time `json:"start_time"`
	PID       int       `json:"pid"`
}

// TaskStatusResult is the state of a Proxmox task.
type TaskStatusResult struct {
	UPID string  `json:"upid"`
	Task TaskRef `json:"task"`
	// Status is "running" or "stopped".
	Status string `json:"status"`
	// ExitStatus is set once stopped: "OK", "WARNINGS: <n>" or an error text.
	ExitStatus string `json:"exitstatus,omitempty"`
}

// Running reports whether the task has not stopped yet.
func (t *TaskStatusResult) Running() bool { return t.Status != "stopped" }

// Succeeded reports whether the task stopped with "OK" or "WARNINGS: <n>".
func (t *TaskStatusResult) Succeeded() bool {
	return t.Status == "stopped" && exitStatusOK(t.ExitStatus)
}

func exitStatusOK(s string) bool {
	if s == "OK" {
		return true
	}
	var n int
	_, err := fmt.Sscanf(s, "WARNINGS: %d", &n)
	return err == nil && s == "WARNINGS: "+strconv.Itoa(n)
}
