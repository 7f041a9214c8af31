package proxmoxsafe

import "time"

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
	// TargetNode is, for a migration, the node the guest moves to
	// (Target.Node is where it was); empty for other mutations.
	TargetNode string `json:"target_node,omitempty"`
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
	// NewGuest is set by the operations that create a guest (class
	// "provision"): the guest being created and what its configuration
	// must read back for the creation to count as done.
	NewGuest *NewGuest `json:"new_guest,omitempty"`
	// Storage is, for [Client.BackupGuest], the storage the backup goes
	// to; VolID is the new backup volume once the wait verified it.
	Storage string `json:"storage,omitempty"`
	VolID   string `json:"volid,omitempty"`
	// Plan is set, and UPID empty, when the input asked for a plan:
	// nothing was submitted (see [Plan]).
	Plan *Plan `json:"plan,omitempty"`
	// Synchronous is true, and UPID empty, when Proxmox applied the
	// request before it answered (a container's PUT …/config answers
	// null): there is no task to poll; [Client.Verify] reads the result.
	Synchronous bool `json:"synchronous,omitempty"`
	// Changes lists, for the config class, each key (or disk) with its
	// value before and the value asked for. [Client.Verify] checks them.
	Changes []ConfigChange `json:"changes,omitempty"`
	// op is the operation that submitted it, for the audit records of
	// the wait; "" for receipts built by hand.
	op Operation
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

// ConfigChange is one change of the config class: a config key set or
// deleted ([Client.SetGuestConfig]) or a disk grown ([Client.ResizeDisk]).
// Free text (a description) appears as "sha256:<16 hex digits>", never
// quoted.
type ConfigChange struct {
	// Key is the config key ("cores", "description") or the disk
	// ("scsi0", "rootfs").
	Key string `json:"key"`
	// Current is the value read before the change ("" when unset); for a
	// disk its size ("32G"). Pending is a change Proxmox already holds
	// for the next start, if any.
	Current string `json:"current,omitempty"`
	Pending string `json:"pending,omitempty"`
	// New is the value asked for; for a disk the size it will have.
	New string `json:"new,omitempty"`
	// Delete is true when the key is removed.
	Delete bool `json:"delete,omitempty"`
}
