package proxmoxsafe

import (
	"context"
	"net/url"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// OpResizeDisk is the name of [Client.ResizeDisk].
const OpResizeDisk Operation = "ResizeDisk"

// resizeDiskOp declares [Client.ResizeDisk].
var resizeDiskOp = operation{verify: configVerifier, info: OperationInfo{
	Name:         OpResizeDisk,
	Class:        ClassConfig,
	Method:       "PUT",
	Route:        "/nodes/{node}/{type}/{vmid}/resize",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "resize", Risk: "a grown disk cannot be shrunk again; the storage must have the space, and the partitions and file systems inside the guest must be grown there."},
	},
	ApprovalFormat: "APPROVE resize <node>/<type>/<vmid> disk=<disk> size=<size>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state, config and running tasks first"},
		{Path: pathVMs, Name: "VM.Config.Disk"},
		{Path: pathStorage, Name: "Datastore.AllocateSpace",
			Note: "on the storage that holds the disk; Proxmox checks it when it resizes"},
	},
}}

// ResizeDiskInput names the disk [Client.ResizeDisk] grows and by how much.
type ResizeDiskInput struct {
	GuestRef
	// Disk is the disk's config key: for a VM ide0–ide3, sata0–sata5,
	// scsi0–scsi30, virtio0–virtio15, efidisk0 or tpmstate0; for a
	// container rootfs or mp0–mp255 (Proxmox's resize enum).
	Disk string `json:"disk" validate:"required,min=1,max=16" jsonschema:"e.g. scsi0, virtio1, rootfs, mp0."`
	// Size is "+<n>[KMGT]" to grow by n, or "<n>[KMGT]" for an absolute
	// size that must be larger than today's (K, M, G, T are powers of
	// 1024; no unit means bytes). A disk is never shrunk. The size is
	// part of the approval phrase exactly as given.
	Size string `json:"size" validate:"required,min=1,max=24" jsonschema:"+10G adds; 50G is the new total."`
	Controls
}

// Target returns the guest the input names.
func (in ResizeDiskInput) Target() Target { return Target{Node: in.Node, Type: in.Type, VMID: in.VMID} }

func (in ResizeDiskInput) approvalParams() []ApprovalParam {
	return []ApprovalParam{{Name: "disk", Value: in.Disk}, {Name: "size", Value: in.Size}}
}

// ApprovalPhrase returns the phrase that approves this input, e.g.
// "APPROVE resize pve1/qemu/101 disk=scsi0 size=+10G".
func (in ResizeDiskInput) ApprovalPhrase() string {
	return ApprovalPhrase("resize", in.Target(), in.approvalParams()...)
}

var (
	// resizeSizeRe is the resize size (the schema's pattern), bounded.
	resizeSizeRe = lazyre.New(`^\+?[0-9]{1,15}(\.[0-9]{1,6})?[KMGT]?$`)
	// sizeRe is a size= in a disk line.
	sizeRe       = lazyre.New(`^[0-9]{1,18}(\.[0-9]{1,6})?[KMGT]?$`)
	qemuDiskRe   = lazyre.New(`^(ide[0-3]|sata[0-5]|scsi([0-9]|[12][0-9]|30)|virtio([0-9]|1[0-5])|efidisk0|tpmstate0)$`)
	lxcDiskRe    = lazyre.New(`^(rootfs|mp([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]))$`)
	hostDeviceRe = lazyre.New(`^/`)
)

// checkResizeInput checks the disk key for the guest type and the size,
// before any I/O.
func (in ResizeDiskInput) check() error {
	var fe []FieldError
	switch {
	case in.Type == TypeQEMU && !qemuDiskRe.Regexp().MatchString(in.Disk):
		fe = append(fe, FieldError{Field: "disk", Problem: "is not a VM disk key (ide0–3, sata0–5, scsi0–30, virtio0–15, efidisk0, tpmstate0)"})
	case in.Type == TypeLXC && !lxcDiskRe.Regexp().MatchString(in.Disk):
		fe = append(fe, FieldError{Field: "disk", Problem: "is not a container disk key (rootfs, mp0–255)"})
	}
	if !resizeSizeRe.Regexp().MatchString(in.Size) {
		fe = append(fe, FieldError{Field: "size", Problem: "must be +<n>[K|M|G|T] or <n>[K|M|G|T], e.g. +10G or 64G"})
	} else if n, _ := parseSize(strings.TrimPrefix(in.Size, "+")); n == 0 {
		fe = append(fe, FieldError{Field: "size", Problem: "must grow the disk: zero changes nothing"})
	}
	if len(fe) > 0 {
		return &ValidationError{Fields: fe}
	}
	return nil
}

// ResizeDisk grows one disk of a guest (class "config"; PUT …/resize, a
// "resize" task). Shrinking is refused before any request: an absolute
// size must be larger than the disk's size in the fresh config. It runs
// the pipeline of [Client.GuestPower]: the guest must not be protected,
// locked or a template (a template's disks are the base of its linked
// clones), and the disk must exist, have a size and be a storage volume
// (not a CD-ROM or a host device). The request carries the digest of the
// config read, so Proxmox refuses it if the config changed meanwhile. The
// approval phrase names the disk and the size as given:
//
//	APPROVE resize pve1/qemu/101 disk=scsi0 size=+10G
//
// With in.Wait it waits for the task and verifies the new size in the
// config. Only the disk grows: partitions and file systems inside the
// guest must be grown there.
func (c *Client) ResizeDisk(ctx context.Context, in ResizeDiskInput) (*Receipt, error) {
	t := in.Target()
	form := url.Values{"disk": {in.Disk}, "size": {in.Size}}
	var change ConfigChange
	var digest string
	raw := c.configRead(t)
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &resizeDiskOp, mutationCall: mutationCall{
		planOnly:   in.Plan,
		action:     "resize",
		input:      in,
		checkInput: in.check,
		target:     t,
		params:     in.approvalParams(),
		given:      in.Approval,
		prefetch:   []prefetcher{raw},
		precondition: func(ctx context.Context, s GuestState) error {
			cfg, err := configForChange(ctx, t, s, raw, &digest)
			if err != nil {
				return err
			}
			ch, err := resizeChange(t, s, in, cfg[in.Disk])
			if err != nil {
				return err
			}
			change = ch
			form.Set("digest", digest)
			return nil
		},
		effect: func(s GuestState) string {
			return "grow disk " + in.Disk + " of " + describe(t, s) + " from " + change.Current + " to " + change.New +
				"; a disk cannot be shrunk again, and the partitions and file systems inside the guest must be grown there"
		},
		path:    guestPath(t, "resize"),
		form:    form,
		changes: func() []ConfigChange { return []ConfigChange{change} },
	}})
}

// configPrecondition is what both config operations refuse from the
// guest's state: a lock, a template.
func configPrecondition(t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; its configuration and disks are the base of its clones and are not changed here", who)
	}
	return nil
}

// configRead is the read of t's config, for a precondition's prefetch.
func (c *Client) configRead(t Target) *prefetch[map[string]string] {
	return newPrefetch(func(ctx context.Context) (map[string]string, error) { return c.readRawConfig(ctx, t) })
}

// configForChange is the precondition both config operations start with:
// the guest is neither locked nor a template, and its raw configuration
// is read. On the re-check after an approval the configuration must still
// have the digest the approver saw (*digest, set by the first read); the
// request then carries that digest, so Proxmox too refuses a change made
// in between.
func configForChange(ctx context.Context, t Target, s GuestState, raw *prefetch[map[string]string], digest *string) (map[string]string, error) {
	if err := configPrecondition(t, s); err != nil {
		return nil, err
	}
	cfg, err := raw.get(ctx)
	if err != nil {
		return nil, err
	}
	if *digest != "" && cfg["digest"] != *digest {
		return nil, refuse(ErrPrecondition, "the configuration of %s changed while the approval was pending; ask for approval again", describe(t, s))
	}
	*digest = cfg["digest"]
	return cfg, nil
}

// resizeChange checks the disk line and the size against the current
// size and returns the change, or a refusal.
func resizeChange(t Target, s GuestState, in ResizeDiskInput, line string) (ConfigChange, error) {
	who := describe(t, s)
	if line == "" {
		return ConfigChange{}, refuse(ErrPrecondition, "%s has no disk %s", who, in.Disk)
	}
	volume, _, _ := strings.Cut(line, ",")
	switch {
	case strings.Contains(line, "media=cdrom"):
		return ConfigChange{}, refuse(ErrPrecondition, "%s of %s is a CD-ROM drive; it cannot be resized", in.Disk, who)
	case hostDeviceRe.Regexp().MatchString(volume) || volume == "none":
		return ConfigChange{}, refuse(ErrPrecondition, "%s of %s is not a storage volume (a host device or path); it is not resized here", in.Disk, who)
	}
	cur, ok := diskSizeOf(line)
	if !ok {
		return ConfigChange{}, refuse(ErrPrecondition, "%s of %s has no size in its configuration; its size cannot be checked, so it is not resized", in.Disk, who)
	}
	n, _ := parseSize(strings.TrimPrefix(in.Size, "+"))
	newSize := n
	if strings.HasPrefix(in.Size, "+") {
		newSize = cur + n
	}
	if newSize <= cur {
		return ConfigChange{}, refuse(ErrPrecondition, "%s of %s is %s; %s would not make it larger, and disks are never shrunk (give a larger size, or +<n> to grow by n)",
			in.Disk, who, formatSize(cur), in.Size)
	}
	return ConfigChange{Key: in.Disk, Current: formatSize(cur), New: formatSize(newSize)}, nil
}
