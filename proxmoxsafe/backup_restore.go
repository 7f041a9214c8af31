package proxmoxsafe

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpRestoreBackup is the name of [Client.RestoreBackup].
const OpRestoreBackup Operation = "RestoreBackup"

// restoreBackupOp declares [Client.RestoreBackup].
var restoreBackupOp = operation{verify: provisionVerifier, info: OperationInfo{
	Name:         OpRestoreBackup,
	Class:        ClassRestore,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "restore", Risk: "the restored guest takes storage and, once started, runs the backed-up system beside the original (same name; with unique=0 also the same MAC addresses)."},
	},
	ApprovalFormat: "APPROVE restore <node>/<type>/<vmid> archive=<volid> unique=<1|0>[ storage=<storage>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Allocate",
			Note: "on /vms/{newid}: the restore creates a new guest"},
		{Path: pathVMs, Name: "VM.Backup",
			Note: "on the guest the backup is of: with Datastore.AllocateSpace on its storage, what lets the token read the archive"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the backup's storage and on every storage the restored disks go to"},
		{Path: pathSDNZones, Name: "SDN.Use", Optional: true,
			Note: "on the bridges of the backed-up network devices, checked by the task after it extracted the configuration"},
	},
}}

// RestoreBackupInput names the backup [Client.RestoreBackup] restores and
// the new guest it becomes. There is no way to restore over an existing
// guest: that destroys it, and is not offered.
type RestoreBackupInput struct {
	// Node is where the new guest is created; it must be online and on
	// the allowlist, and see the backup's storage.
	Node string `json:"node" validate:"required,pve_node"`
	// Archive is the backup volume (see backup_list).
	Archive string `json:"archive" validate:"required,max=255,pve_backupvolume" jsonschema:"Volume id from backup_list."`
	// VMID is the new guest's id; 0 takes the next free one.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid" jsonschema:"The new guest's."`
	// Storage is where the restored disks go; "" keeps each disk's
	// storage as backed up.
	Storage string `json:"storage,omitempty" validate:"omitempty,pve_storage" jsonschema:"Default: the backed-up disks' storages."`
	// KeepMACAddresses restores the backed-up MAC addresses (unique=0);
	// by default the new guest gets new ones (unique=1), so it does not
	// clash with the original on the network.
	KeepMACAddresses bool `json:"keep_mac_addresses,omitempty"`
	Controls
}

// guestType is the type of guest the archive holds.
func (in RestoreBackupInput) guestType() GuestType {
	_, name, _ := strings.Cut(in.Archive, ":")
	if strings.HasPrefix(name, "backup/vzdump-qemu-") || strings.HasPrefix(name, "backup/vm/") {
		return TypeQEMU
	}
	return TypeLXC
}

// archiveStorage is the storage the archive is on.
func (in RestoreBackupInput) archiveStorage() string {
	s, _, _ := strings.Cut(in.Archive, ":")
	return s
}

// sourceVMID is the VMID the archive's name carries.
func (in RestoreBackupInput) sourceVMID() int {
	_, name, _ := strings.Cut(in.Archive, ":")
	name = strings.TrimPrefix(name, "backup/")
	var f []string
	if strings.HasPrefix(name, "vzdump-") {
		f = strings.Split(name, "-") // vzdump, type, vmid, …
	} else {
		f = append([]string{""}, strings.Split(name, "/")...) // "", vm|ct, vmid, time
	}
	if len(f) < 3 {
		return 0
	}
	id, _ := strconv.Atoi(f[2])
	return id
}

// params are the request's parameters in phrase order (vmid is the
// target).
func (in RestoreBackupInput) params(vmid int) []ApprovalParam {
	ps := []ApprovalParam{{Name: "vmid", Value: strconv.Itoa(vmid)}}
	if in.guestType() == TypeQEMU {
		ps = append(ps, ApprovalParam{Name: "archive", Value: in.Archive})
	} else {
		ps = append(ps, ApprovalParam{Name: "ostemplate", Value: in.Archive}, ApprovalParam{Name: "restore", Value: "1"})
	}
	ps = append(ps, ApprovalParam{Name: "unique", Value: boolParam(!in.KeepMACAddresses)})
	if in.Storage != "" {
		ps = append(ps, ApprovalParam{Name: "storage", Value: in.Storage})
	}
	return ps
}

// approvalParams are the phrase's parameters: the archive is named
// archive= for both types.
func (in RestoreBackupInput) approvalParams() []ApprovalParam {
	ps := []ApprovalParam{{Name: "archive", Value: in.Archive}, {Name: "unique", Value: boolParam(!in.KeepMACAddresses)}}
	if in.Storage != "" {
		ps = append(ps, ApprovalParam{Name: "storage", Value: in.Storage})
	}
	return ps
}

// ApprovalPhrase returns the phrase that approves this input for the new
// VMID vmid (in.VMID when set), e.g. "APPROVE restore pve1/qemu/150
// archive=local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst unique=1".
func (in RestoreBackupInput) ApprovalPhrase(vmid int) string {
	if in.VMID != 0 {
		vmid = in.VMID
	}
	return ApprovalPhrase("restore", Target{Node: in.Node, Type: in.guestType(), VMID: vmid}, in.approvalParams()...)
}

func (RestoreBackupInput) approvalLimit() int { return MaxProvisionApprovalLen }

// RestoreBackup restores a backup to a new guest (class "restore"; POST
// /nodes/{node}/qemu with archive, or /nodes/{node}/lxc with ostemplate
// and restore=1: a qmrestore or vzrestore task). It never overwrites a
// guest (force is never sent), never starts the restored guest, and by
// default gives it new MAC addresses (unique=1). It refuses, with nothing
// sent, a VMID in use or protected by the operator, a node not online, a
// backup the node's storage does not list, and a target storage that
// does not exist on the node, is disabled or inactive, or lacks content
// images (VM) or rootdir (container). With in.Wait it verifies that the
// new guest exists, unlocked (Proxmox holds "create" during the restore),
// on its node.
func (c *Client) RestoreBackup(ctx context.Context, in RestoreBackupInput) (*Receipt, error) {
	t := Target{Node: in.Node, Type: in.guestType(), VMID: in.VMID}
	var found BackupInfo
	m := &mutation{decl: &restoreBackupOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "restore",
		input:    in,
		target:   t,
		given:    in.Approval,
		path:     pve.Path("nodes", in.Node, string(t.Type)),
		params:   in.approvalParams(),
	}}
	m.prepare = func(ctx context.Context, m *mutation) error {
		id, err := c.resolveVMID(ctx, in.VMID)
		if err != nil {
			return err
		}
		m.target.VMID = id
		m.form = paramForm(in.params(id))
		m.newGuest = &NewGuest{Node: in.Node, Type: t.Type, VMID: id}
		return nil
	}
	m.fresh = func(context.Context) (GuestState, error) { return GuestState{Status: "absent"}, nil }
	m.precondition = func(ctx context.Context, _ GuestState) error {
		b, err := c.restorePrecondition(ctx, in, m.target)
		found = b
		if err != nil {
			return err
		}
		// What the proof compares the restored guest with.
		arch, err := c.archiveConfig(ctx, in.Node, in.Archive, t.Type, !in.KeepMACAddresses)
		if err != nil {
			return err
		}
		m.newGuest.Archive, m.newGuest.Unique = arch, !in.KeepMACAddresses
		return nil
	}
	m.effect = func(GuestState) string { return restoreEffect(in, m.target, found) }
	return c.waitIfAsked(ctx, in.Wait, m)
}

// restorePrecondition checks the node, the new VMID, the backup and the
// target storage; it returns the backup as the node lists it.
func (c *Client) restorePrecondition(ctx context.Context, in RestoreBackupInput, t Target) (BackupInfo, error) {
	view, err := c.readClusterView(ctx)
	if err != nil {
		return BackupInfo{}, err
	}
	if err := checkNodeOnline(view, t.Node); err != nil {
		return BackupInfo{}, err
	}
	if err := c.checkVMIDFree(ctx, view, t.VMID); err != nil {
		return BackupInfo{}, err
	}
	list, err := c.nodeStorages(ctx, t.Node)
	if err != nil {
		return BackupInfo{}, err
	}
	if _, err := checkStorage(list, t.Node, in.archiveStorage(), "backup"); err != nil {
		return BackupInfo{}, err
	}
	if in.Storage != "" {
		content := "images"
		if t.Type == TypeLXC {
			content = "rootdir"
		}
		if _, err := checkStorage(list, t.Node, in.Storage, content); err != nil {
			return BackupInfo{}, err
		}
	}
	b, err := c.findBackup(ctx, t.Node, in.Archive)
	if err != nil {
		return BackupInfo{}, err
	}
	return b, nil
}

// findBackup returns the backup volume volid as node lists it, or a
// refusal when it does not.
func (c *Client) findBackup(ctx context.Context, node, volid string) (BackupInfo, error) {
	storage, _, _ := strings.Cut(volid, ":")
	res, err := c.ListBackups(ctx, ListBackupsInput{Node: node, Storage: storage, Limit: MaxListLimit})
	if err != nil {
		return BackupInfo{}, err
	}
	for _, b := range res.Backups {
		if b.VolID == volid {
			return b, nil
		}
	}
	return BackupInfo{}, refuse(ErrPrecondition, "backup %s is not listed on node %s (it does not exist there, or the token lacks VM.Backup on its guest and Datastore.AllocateSpace on %s)", volid, node, storage)
}

func restoreEffect(in RestoreBackupInput, t Target, b BackupInfo) string {
	kind := "VM"
	if t.Type == TypeLXC {
		kind = "container"
	}
	e := "restore the backup " + in.Archive
	if b.VMID != 0 {
		e += " (of guest " + strconv.Itoa(b.VMID)
		if !b.Time.IsZero() {
			e += ", taken " + b.Time.UTC().Format(time.RFC3339)
		}
		e += ")"
	}
	e += " as the new " + kind + " " + strconv.Itoa(t.VMID) + " on " + t.Node
	if in.Storage != "" {
		e += ", disks on " + in.Storage
	} else {
		e += ", disks on the storages they were backed up from"
	}
	if in.KeepMACAddresses {
		e += ", with the backed-up MAC addresses (they clash with the original's if it runs)"
	} else {
		e += ", with new MAC addresses"
	}
	return e + "; no existing guest is touched and the new one stays stopped"
}
