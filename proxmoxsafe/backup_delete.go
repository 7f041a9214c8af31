package proxmoxsafe

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpDeleteBackup is the name of [Client.DeleteBackup].
const OpDeleteBackup Operation = "DeleteBackup"

// deleteBackupOp declares [Client.DeleteBackup].
var deleteBackupOp = operation{verify: deleteBackupVerifier, info: OperationInfo{
	Name:         OpDeleteBackup,
	Class:        ClassDestroy,
	Method:       "DELETE",
	Route:        "/nodes/{node}/storage/{storage}/content/{volume}",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "delete-backup", Risk: "a deleted backup is gone for good: it can no longer undo anything."},
	},
	ApprovalFormat: "APPROVE delete-backup <node>/<type>/<vmid> volume=<volid>",
	Privileges: []Privilege{
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the backup's storage; with VM.Backup on the guest it lets the preconditions see the backup"},
		{Path: pathVMs, Name: "VM.Backup",
			Note: "on the guest the backup is of"},
		{Path: pathNode, Name: "Sys.Audit", Optional: true,
			Note: "to see running tasks of the guest that are not the token's own"},
	},
}}

// DeleteBackupInput names the backup volume [Client.DeleteBackup] deletes.
type DeleteBackupInput struct {
	// Node is the node to ask; it must be on the allowlist and see the
	// storage.
	Node string `json:"node" validate:"required,pve_node"`
	// Volume is the backup volume id (see backup_list).
	Volume string `json:"volume" validate:"required,max=255,pve_backupvolume" jsonschema:"From backup_list."`
	Controls
}

// backupTarget is the guest a backup volume id names: its type and VMID
// from the name, on node.
func backupTarget(node, volid string) Target {
	t := Target{Node: node, Type: TypeLXC}
	_, name, _ := strings.Cut(volid, ":")
	name = strings.TrimPrefix(name, "backup/")
	var f []string
	if strings.HasPrefix(name, "vzdump-") {
		f = strings.Split(name, "-") // vzdump, type, vmid, …
	} else {
		f = append([]string{""}, strings.Split(name, "/")...) // "", vm|ct, vmid, time
	}
	if len(f) > 2 {
		if f[1] == "qemu" || f[1] == "vm" {
			t.Type = TypeQEMU
		}
		t.VMID, _ = strconv.Atoi(f[2])
	}
	return t
}

// Target returns the guest the backup is of, on Node.
func (in DeleteBackupInput) Target() Target { return backupTarget(in.Node, in.Volume) }

func (in DeleteBackupInput) approvalParams() []ApprovalParam {
	return []ApprovalParam{{Name: "volume", Value: in.Volume}}
}

// ApprovalPhrase returns the phrase that approves this input, e.g.
// "APPROVE delete-backup pve1/qemu/100
// volume=local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst".
func (in DeleteBackupInput) ApprovalPhrase() string {
	return ApprovalPhrase("delete-backup", in.Target(), in.approvalParams()...)
}

func (DeleteBackupInput) approvalLimit() int { return MaxProvisionApprovalLen }

// DeleteBackup deletes one backup volume for good (class "destroy";
// DELETE /nodes/{node}/storage/{storage}/content/{volume}, an imgdel
// task). The guest the backup is of is the target: a guest the operator
// protects keeps its backups. It refuses, with nothing sent, a backup
// the node does not list and a protected backup (with Proxmox's reason).
// The class's default approval is one only a person gives. With in.Wait
// it verifies that the volume is no longer listed.
func (c *Client) DeleteBackup(ctx context.Context, in DeleteBackupInput) (*Receipt, error) {
	t := in.Target()
	storage, _, _ := strings.Cut(in.Volume, ":")
	var found BackupInfo
	m := &mutation{decl: &deleteBackupOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "delete-backup",
		input:    in,
		target:   t,
		params:   in.approvalParams(),
		given:    in.Approval,
		// The volume's "/" stay path separators: the guard refuses an
		// encoded slash, and Proxmox takes the rest of the path as the
		// volume (pve6 storage-content-delete-backup.json was sent so).
		path:     pve.Path(append([]string{"nodes", in.Node, "storage", storage, "content"}, strings.Split(in.Volume, "/")...)...),
		decorate: func(r *Receipt) { r.Storage, r.VolID = storage, in.Volume },
	}}
	m.fresh = func(ctx context.Context) (GuestState, error) {
		b, err := c.findBackup(ctx, in.Node, in.Volume)
		var re *RefusalError
		if err != nil && !errors.As(err, &re) {
			return GuestState{}, err
		}
		found = b
		if err != nil {
			return GuestState{Status: "absent"}, nil
		}
		st := GuestState{Status: "listed"}
		if b.Protected {
			st.Lock = "protected"
		}
		return st, nil
	}
	m.precondition = func(ctx context.Context, s GuestState) error {
		switch {
		case s.Status == "absent":
			return refuse(ErrPrecondition, "backup %s is not listed on node %s (it does not exist there, or the token lacks VM.Backup on its guest and Datastore.AllocateSpace on %s)", in.Volume, in.Node, storage)
		case found.Protected:
			_, volname, _ := strings.Cut(in.Volume, ":")
			return refuse(ErrPrecondition, "backup %s is protected; Proxmox refuses to delete it (\"cannot remove protected volume '%s' on '%s'\"): remove the protection first", in.Volume, volname, storage)
		}
		return nil
	}
	m.effect = func(GuestState) string {
		e := "delete the backup " + in.Volume + " of " + string(t.Type) + " " + strconv.Itoa(t.VMID) + " for good"
		if found.Size > 0 {
			e += " (" + strconv.FormatUint(found.Size, 10) + " bytes"
			if !found.Time.IsZero() {
				e += ", taken " + found.Time.Format("2006-01-02 15:04 UTC")
			}
			e += ")"
		}
		return e + "; with its notes and log files"
	}
	return c.waitIfAsked(ctx, in.Wait, m)
}

// deleteBackupVerifier proves a deletion: the volume is no longer listed.
var deleteBackupVerifier = &verifier{needs: "a backup volume", receipt: func(_ *Client, r *Receipt) error {
	if !backupVolumeRe.MatchString(r.VolID) {
		return &ValidationError{Fields: []FieldError{{Field: "volid", Problem: "is required to verify a backup deletion"}}}
	}
	return nil
}, proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	return proof{what: "deletion of backup " + r.VolID, expected: "backup " + r.VolID + " no longer listed",
		observe: func(ctx context.Context, w *waiter) (bool, error) {
			_, err := w.c.findBackup(ctx, w.r.Target.Node, w.r.VolID)
			var re *RefusalError
			if err == nil {
				w.out.Observed = "backup " + w.r.VolID + " still listed"
				return false, nil
			}
			if !errors.As(err, &re) {
				return false, err
			}
			w.out.Observed = "backup " + w.r.VolID + " no longer listed on " + w.r.Target.Node
			return true, nil
		}}, nil
}}
