package proxmoxsafe

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpBackupGuest is the name of [Client.BackupGuest].
const OpBackupGuest Operation = "BackupGuest"

// backupGuestOp declares [Client.BackupGuest].
var backupGuestOp = operation{verify: backupVerifier, info: OperationInfo{
	Name:         OpBackupGuest,
	Class:        ClassBackup,
	Method:       "POST",
	Route:        "/nodes/{node}/vzdump",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "backup", Risk: "the backup loads the guest's storage and the target storage while it runs and takes space there; mode stop shuts the guest down and starts it again, suspend pauses it."},
	},
	ApprovalFormat: "APPROVE backup <node>/<type>/<vmid> storage=<storage> mode=<snapshot|suspend|stop> compress=<zstd|gzip|lzo|0>[ protected=1][ notes-template=sha256:<12 hex>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state and running tasks first"},
		{Path: pathVMs, Name: "VM.Backup"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the target storage; with VM.Backup it also lets the proof list the new backup"},
	},
}}

// Backup modes and compressions, as vzdump spells them.
const (
	// BackupModeSnapshot backs up a running guest while it runs.
	BackupModeSnapshot = "snapshot"
	// BackupModeSuspend pauses (VM) or freezes (container) the guest for
	// part of the backup.
	BackupModeSuspend = "suspend"
	// BackupModeStop shuts a running guest down, backs it up and starts it
	// again.
	BackupModeStop = "stop"
)

// MaxBackupNotesLen is vzdump's maximum notes-template length.
const MaxBackupNotesLen = 1024

// BackupNotesPattern is what a backup's notes may be: one line of text
// without backslashes or braces, except vzdump's own variables
// {{cluster}}, {{guestname}}, {{node}} and {{vmid}} (vzdump refuses any
// other "{{…}}", and reads backslashes as escapes).
const BackupNotesPattern = `^([^{}\\\n\r]|\{\{(cluster|guestname|node|vmid)\}\})*$`

// BackupGuestInput names the guest [Client.BackupGuest] backs up and how.
type BackupGuestInput struct {
	GuestRef
	// Storage is where the backup goes; it must hold content "backup".
	Storage string `json:"storage" validate:"required,pve_storage"`
	// Mode is snapshot (default), suspend or stop.
	Mode string `json:"mode,omitempty" validate:"omitempty,oneof=snapshot suspend stop"`
	// Compress is zstd (default), gzip, lzo or none; a Proxmox Backup
	// Server compresses by itself and ignores it.
	Compress string `json:"compress,omitempty" validate:"omitempty,oneof=zstd gzip lzo none"`
	// Notes become the backup's notes (vzdump's notes-template).
	Notes string `json:"notes,omitempty" validate:"omitempty,max=1024,pve_text,pve_backupnotes" jsonschema:"One line."`
	// Protected marks the backup protected: pruning skips it and Proxmox
	// refuses to delete it until the mark is removed.
	Protected bool `json:"protected,omitempty" jsonschema:"Exempt from pruning and deletion."`
	Controls
}

// Target returns the guest the input names.
func (in BackupGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

func (in BackupGuestInput) mode() string {
	if in.Mode == "" {
		return BackupModeSnapshot
	}
	return in.Mode
}

// compress is vzdump's value: "0" for none.
func (in BackupGuestInput) compress() string {
	switch in.Compress {
	case "":
		return "zstd"
	case "none":
		return "0"
	}
	return in.Compress
}

// approvalParams are every parameter that changes the backup, in phrase
// order; the notes by their digest.
func (in BackupGuestInput) approvalParams() []ApprovalParam {
	ps := []ApprovalParam{{Name: "storage", Value: in.Storage}, {Name: "mode", Value: in.mode()}, {Name: "compress", Value: in.compress()}}
	if in.Protected {
		ps = append(ps, ApprovalParam{Name: "protected", Value: "1"})
	}
	if in.Notes != "" {
		ps = append(ps, ApprovalParam{Name: "notes-template", Value: TextDigest(in.Notes)})
	}
	return ps
}

// ApprovalPhrase returns the phrase that approves this input, e.g.
// "APPROVE backup pve1/qemu/101 storage=local mode=snapshot compress=zstd".
func (in BackupGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("backup", in.Target(), in.approvalParams()...)
}

// form is the request as sent. remove=0: vzdump would otherwise prune
// older backups by the storage's retention, and this class only adds a
// backup. Nothing root-only or host-reaching (script, dumpdir, tmpdir,
// job-id, exclude-path, …) is ever sent: the input has no field for them.
func (in BackupGuestInput) form() url.Values {
	f := url.Values{
		"vmid":     {strconv.Itoa(in.VMID)},
		"storage":  {in.Storage},
		"mode":     {in.mode()},
		"compress": {in.compress()},
		"remove":   {"0"},
	}
	if in.Protected {
		f.Set("protected", "1")
	}
	if in.Notes != "" {
		f.Set("notes-template", in.Notes)
	}
	return f
}

// BackupGuest backs up one guest (class "backup"; POST
// /nodes/{node}/vzdump with vmid, a vzdump task). It runs the pipeline of
// [Client.GuestPower] and refuses, with nothing sent, a locked guest (a
// backup, a snapshot … in progress) and a storage that is not on the
// node, disabled, inactive or without content "backup". It never prunes
// older backups (remove=0) and never sends vzdump's root-only or
// host-reaching parameters.
//
// vzdump answers "OK" without a task when the guest is not on the node
// (it moved after the fresh read): that is returned as an error saying
// nothing was backed up. With in.Wait it verifies that a new backup of
// this guest, created after the task started, is listed on the storage;
// a failed task comes with its log tail.
func (c *Client) BackupGuest(ctx context.Context, in BackupGuestInput) (*Receipt, error) {
	t := in.Target()
	m := &mutation{decl: &backupGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "backup",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		path:     pve.Path("nodes", in.Node, "vzdump"),
		form:     in.form(),
		precondition: func(ctx context.Context, s GuestState) error {
			return c.backupPrecondition(ctx, in, s)
		},
		effect:   func(s GuestState) string { return backupEffect(in, s) },
		taskless: backupTaskless(t),
		decorate: func(r *Receipt) { r.Storage = in.Storage },
	}}
	if in.Notes != "" {
		m.planForm = in.form()
		m.planForm.Set("notes-template", TextDigest(in.Notes))
	}
	return c.waitIfAsked(ctx, in.Wait, m)
}

func (c *Client) backupPrecondition(ctx context.Context, in BackupGuestInput, s GuestState) error {
	t := in.Target()
	if s.Lock != "" {
		return refuse(ErrPrecondition, "%s is locked (%s); vzdump refuses a locked guest: wait for the operation holding the lock to finish", describe(t, s), s.Lock)
	}
	list, err := c.nodeStorages(ctx, in.Node)
	if err != nil {
		return err
	}
	_, err = checkStorage(list, in.Node, in.Storage, "backup")
	return err
}

// backupEffect says what the backup does to the guest, by mode and state.
func backupEffect(in BackupGuestInput, s GuestState) string {
	t := in.Target()
	comp := in.compress()
	if comp == "0" {
		comp = "none"
	}
	e := "back up " + describe(t, s) + " to storage " + in.Storage + " (mode " + in.mode() + ", compression " + comp + ")"
	if in.Protected {
		e += ", marked protected"
	}
	running := s.Status == "running"
	switch {
	case !running:
		e += "; the guest is " + s.Status + " and stays so"
	case in.mode() == BackupModeStop && t.Type == TypeLXC:
		e += "; the running container is stopped for the whole backup and started again afterwards"
	case in.mode() == BackupModeStop:
		e += "; the running VM is shut down, then started again at once while its disks are copied (downtime: a shutdown and a boot)"
	case in.mode() == BackupModeSuspend && t.Type == TypeLXC:
		e += "; the running container is frozen for a second copy pass, then resumed"
	case in.mode() == BackupModeSuspend:
		e += "; the running VM is paused for part of the backup, then resumed"
	case t.Type == TypeLXC:
		e += "; the running container keeps running (if its volumes cannot be snapshotted, vzdump falls back to suspend mode and freezes it briefly)"
	default:
		e += "; the running VM keeps running while its disks are copied (its writes are slowed)"
	}
	return e + "; older backups are kept (no pruning)"
}

// backupTaskless turns vzdump's "OK" (no task: no selected guest is on the
// node) into an error that says nothing was backed up.
func backupTaskless(t Target) func(answer string) error {
	return func(answer string) error {
		if answer != "OK" {
			return nil
		}
		return refuse(ErrPrecondition, "Proxmox answered OK without starting a backup: vzdump does that when the guest is not on node %s (it may have moved since it was read); nothing was backed up, check where %s %d is now",
			t.Node, t.Type, t.VMID)
	}
}

// backupVerifier proves a backup: a backup of the guest on the storage,
// created no earlier than the task started, listed by the node.
var backupVerifier = &verifier{needs: "a backup storage", receipt: (*Client).checkBackupReceipt,
	proof: func(_ *Client, r *Receipt, ref TaskRef) (proof, error) {
		since := ref.StartTime
		return proof{what: "backup of " + r.Target.guestString(),
			expected: "a new backup of " + r.Target.guestString() + " on storage " + r.Storage,
			observe: func(ctx context.Context, w *waiter) (bool, error) {
				return w.observeBackup(ctx, since)
			}}, nil
	}}

func (c *Client) checkBackupReceipt(r *Receipt) error {
	if !storageRe.MatchString(r.Storage) {
		return &ValidationError{Fields: []FieldError{{Field: "storage", Problem: "is required to verify a backup"}}}
	}
	return nil
}

// observeBackup lists the guest's backups on the storage and looks for one
// created at or after since (Proxmox's clock: the UPID's start time).
func (w *waiter) observeBackup(ctx context.Context, since time.Time) (bool, error) {
	t := w.r.Target
	res, err := w.c.ListBackups(ctx, ListBackupsInput{Node: t.Node, Storage: w.r.Storage, VMID: t.VMID, Limit: 1})
	if err != nil {
		return false, err
	}
	if len(res.Backups) == 0 || res.Backups[0].Time.Before(since) {
		w.out.Observed = "no backup of " + t.guestString() + " newer than the task's start on " + w.r.Storage
		return false, nil
	}
	b := res.Backups[0]
	w.r.VolID = b.VolID
	w.out.Observed = "backup " + b.VolID + " (" + strconv.FormatUint(b.Size, 10) + " bytes) listed on " + w.r.Storage
	return true, nil
}
