package proxmoxsafe

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpListBackups is the name of [Client.ListBackups].
const OpListBackups Operation = "ListBackups"

// listBackupsOp declares [Client.ListBackups].
var listBackupsOp = operation{info: OperationInfo{
	Name:         OpListBackups,
	Method:       "GET",
	Route:        "/nodes/{node}/storage/{storage}/content",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathStorage, Name: "Datastore.Audit"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace", Optional: true,
			Note: "Proxmox shows a backup only with Datastore.AllocateSpace on the storage and VM.Backup on the guest (or Datastore.Allocate); with Datastore.Audit alone the list is empty"},
		{Path: pathVMs, Name: "VM.Backup", Optional: true,
			Note: "see Datastore.AllocateSpace: both are needed to see a guest's backups"},
	},
}}

// Caps on backup fields. Notes are free text set by whoever ran the backup
// (vzdump's default is the guest name): data, never instructions.
const (
	maxVolIDLen      = 256
	maxBackupNoteLen = 256
)

// ListBackupsInput selects the backups [Client.ListBackups] lists.
type ListBackupsInput struct {
	// Node is the node to ask; it must be on the allowlist. For a storage
	// that is not shared, it sees only its own backup files.
	Node string `json:"node" validate:"required,pve_node"`
	// Storage is the storage id, e.g. "local" or "pbs".
	Storage string `json:"storage" validate:"required,pve_storage"`
	// VMID, when set, keeps only that guest's backups.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Limit caps the number of backups; 0 means [DefaultListLimit]; at most
	// [MaxListLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Default 200."`
}

// ListBackupsResult is what [Client.ListBackups] returns, newest first.
type ListBackupsResult struct {
	Node    string       `json:"node"`
	Storage string       `json:"storage"`
	Backups []BackupInfo `json:"backups"`
	// Total counts every backup that matched, including those beyond Limit.
	Total int `json:"total"`
}

// BackupInfo is one backup volume. Strings are sanitized.
type BackupInfo struct {
	// VolID is the volume id, e.g.
	// "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst".
	VolID string `json:"volid"`
	// VMID is the guest the backup is of; 0 when Proxmox does not say.
	VMID int `json:"vmid"`
	// Type is the guest type ("qemu" or "lxc") when Proxmox reports it.
	Type string `json:"type,omitempty"`
	// Time is the creation time.
	Time time.Time `json:"ctime"`
	// Size is in bytes.
	Size uint64 `json:"size"`
	// Format is e.g. "vma.zst", "tar.zst", "pbs-vm".
	Format string `json:"format"`
	// Notes is the first line of the backup's notes, capped: text written
	// by people or templates, data rather than instructions.
	Notes string `json:"notes,omitempty"`
	// NotesTruncated is true when Notes was cut at the cap.
	NotesTruncated bool `json:"notes_truncated,omitempty"`
	// Protected backups are exempt from pruning and cannot be deleted.
	Protected bool `json:"protected"`
	// Encrypted is true for client-side encrypted backups (PBS).
	Encrypted bool `json:"encrypted,omitempty"`
	// Verification is the last PBS verification state ("ok", "failed"), if any.
	Verification string `json:"verification,omitempty"`
}

type rawVolume struct {
	VolID        pve.String `json:"volid"`
	VMID         pve.Int    `json:"vmid"`
	Subtype      pve.String `json:"subtype"`
	CTime        pve.Int    `json:"ctime"`
	Size         pve.Int    `json:"size"`
	Format       pve.String `json:"format"`
	Notes        pve.String `json:"notes"`
	Protected    pve.Bool   `json:"protected"`
	Encrypted    pve.String `json:"encrypted"`
	Content      pve.String `json:"content"`
	Verification *struct {
		State pve.String `json:"state"`
	} `json:"verification"`
}

// ListBackups lists the backup volumes on one storage, as one node sees it,
// newest first: GET /nodes/{node}/storage/{storage}/content?content=backup
// (with vmid when set). The node must be on the allowlist; nothing is sent
// otherwise.
//
// Proxmox lists a backup only to a token that holds Datastore.Allocate on
// the storage, or Datastore.AllocateSpace on the storage and VM.Backup on
// the guest; with Datastore.Audit alone the call succeeds and the list is
// empty. [Client.Permissions] reports this.
func (c *Client) ListBackups(ctx context.Context, in ListBackupsInput) (*ListBackupsResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, "ListBackups", start, err)
	}
	if err := c.policy.checkNode(in.Node); err != nil {
		return nil, c.logged(ctx, "ListBackups", start, err, nodeAttr(in.Node))
	}
	q := url.Values{"content": {"backup"}}
	if in.VMID != 0 {
		q.Set("vmid", strconv.Itoa(in.VMID))
	}
	var raw []rawVolume
	if err := c.get(ctx, pve.Path("nodes", in.Node, "storage", in.Storage, "content"), q, &raw); err != nil {
		return nil, c.logged(ctx, "ListBackups", start, err, nodeAttr(in.Node))
	}
	all := make([]BackupInfo, 0, len(raw))
	for _, r := range raw {
		if r.Content != "" && r.Content != "backup" {
			continue // defensive: the content filter is Proxmox's job
		}
		if in.VMID != 0 && int(r.VMID) != in.VMID {
			continue
		}
		b := BackupInfo{
			VolID:     line(string(r.VolID), maxVolIDLen),
			VMID:      int(max(r.VMID, 0)),
			Type:      line(string(r.Subtype), 16),
			Size:      nonNegative(r.Size),
			Format:    line(string(r.Format), 32),
			Protected: bool(r.Protected),
			Encrypted: r.Encrypted != "" && r.Encrypted != "0",
		}
		if r.CTime > 0 {
			b.Time = time.Unix(int64(r.CTime), 0).UTC()
		}
		first, _, _ := strings.Cut(string(r.Notes), "\n")
		b.Notes, b.NotesTruncated = capLine(first, maxBackupNoteLen)
		if r.Verification != nil {
			b.Verification = line(string(r.Verification.State), 32)
		}
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b BackupInfo) int {
		return cmp.Or(b.Time.Compare(a.Time), strings.Compare(a.VolID, b.VolID))
	})
	res := &ListBackupsResult{Node: in.Node, Storage: in.Storage, Total: len(all), Backups: []BackupInfo{}}
	res.Backups = append(res.Backups, all[:min(len(all), limitOr(in.Limit))]...)
	c.logged(ctx, "ListBackups", start, nil, nodeAttr(in.Node))
	return res, nil
}
