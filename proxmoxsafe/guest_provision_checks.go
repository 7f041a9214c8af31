package proxmoxsafe

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// The preconditions of the provision class, read from the cluster right
// before approval (and again after an approval that took time). Each
// refusal says what is wrong; none sends a mutating request.

// resolveVMID returns id, or when it is 0 the next free VMID Proxmox
// proposes (GET /cluster/nextid, answered as a string by real servers).
// A VMID the operator protects is refused either way.
func (c *Client) resolveVMID(ctx context.Context, id int) (int, error) {
	if id == 0 {
		var next pve.Int
		if err := c.get(ctx, "/cluster/nextid", nil, &next); err != nil {
			return 0, &PreconditionReadError{Err: err}
		}
		if !ValidVMID(int(next)) {
			return 0, refuseUpstream("/cluster/nextid did not answer a valid VMID")
		}
		id = int(next)
	}
	if c.policy.protected[id] {
		return 0, refuse(ErrNotAllowed, "guest %d is protected by the operator", id)
	}
	return id, nil
}

// rawClusterEntry is the part of a /cluster/resources entry the provision
// checks read (guests and nodes).
type rawClusterEntry struct {
	Type   string     `json:"type"`
	VMID   pve.Int    `json:"vmid"`
	Node   pve.String `json:"node"`
	Name   pve.String `json:"name"`
	Status pve.String `json:"status"`
	Lock   pve.String `json:"lock"`
	Pool   pve.String `json:"pool"`
}

// clusterView is one read of /cluster/resources.
type clusterView []rawClusterEntry

func (c *Client) readClusterView(ctx context.Context) (clusterView, error) {
	var raw cappedRows[rawClusterEntry]
	if err := c.get(ctx, "/cluster/resources", nil, &raw); err != nil {
		return nil, err
	}
	return clusterView(raw), nil
}

// guest returns the guest entry with that VMID, or nil.
func (v clusterView) guest(vmid int) *rawClusterEntry {
	for i := range v {
		if (v[i].Type == "qemu" || v[i].Type == "lxc") && int(v[i].VMID) == vmid {
			return &v[i]
		}
	}
	return nil
}

// checkVMIDFree refuses a VMID that /cluster/resources lists, then asks
// Proxmox itself (GET /cluster/nextid?vmid=N answers 400 "VM N already
// exists" for a VMID in use), because /cluster/resources leaves out the
// guests the token may not see.
func (c *Client) checkVMIDFree(ctx context.Context, view clusterView, vmid int) error {
	if g := view.guest(vmid); g != nil {
		return refuse(ErrPrecondition, "VMID %d is already in use (%s %d on %s); choose another one, or leave it out to take the next free VMID",
			vmid, g.Type, vmid, line(string(g.Node), MaxNodeLen))
	}
	err := c.get(ctx, "/cluster/nextid", url.Values{"vmid": {strconv.Itoa(vmid)}}, nil)
	var ae *APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.StatusCode == http.StatusBadRequest && ae.Params["vmid"] != "":
		return refuse(ErrPrecondition, "VMID %d is already in use (Proxmox: %s); choose another one, or leave it out to take the next free VMID",
			vmid, line(ae.Params["vmid"], 120))
	}
	return err
}

// checkNodeOnline refuses a node /cluster/resources does not list as online.
func checkNodeOnline(view clusterView, node string) error {
	for _, e := range view {
		if e.Type == "node" && string(e.Node) == node {
			if string(e.Status) != "online" {
				return refuse(ErrPrecondition, "node %s is not online (%s)", node, line(string(e.Status), 16))
			}
			return nil
		}
	}
	return refuse(ErrPrecondition, "node %s is not a member of the cluster (or not visible to the token)", node)
}

// checkPoolNotProtected refuses a new guest joining a protected pool: it
// would be protected the moment it exists, and adding to a protected pool
// changes what the operator protects.
func (c *Client) checkPoolNotProtected(pool string) error {
	if pool == "" {
		return nil
	}
	if why := c.policy.protect.protectedBy("", nil, pool); why != "" {
		return refuse(ErrNotAllowed, "the new guest would join pool %q, which the operator protects", pool)
	}
	return nil
}

// nodeStorage is one storage as a node reports it.
type nodeStorage struct {
	id              string
	content         []string
	shared, enabled bool
	active          bool
}

func (c *Client) nodeStorages(ctx context.Context, node string) ([]nodeStorage, error) {
	var raw []rawNodeStorage
	if err := c.get(ctx, pve.Path("nodes", node, "storage"), nil, &raw); err != nil {
		return nil, err
	}
	out := make([]nodeStorage, 0, len(raw))
	for _, r := range raw {
		out = append(out, nodeStorage{
			id:      string(r.Storage),
			content: strings.Split(string(r.Content), ","),
			shared:  bool(r.Shared),
			enabled: r.Enabled == nil || bool(*r.Enabled),
			active:  bool(r.Active),
		})
	}
	return out, nil
}

// checkStorage refuses a storage that is not on the node, disabled,
// inactive or without the content type; it returns the storage.
func checkStorage(list []nodeStorage, node, id, content string) (nodeStorage, error) {
	i := slices.IndexFunc(list, func(s nodeStorage) bool { return s.id == id })
	switch {
	case i < 0:
		return nodeStorage{}, refuse(ErrPrecondition, "storage %s does not exist on node %s (or the token lacks Datastore.Audit or Datastore.AllocateSpace on it)", id, node)
	case !list[i].enabled:
		return nodeStorage{}, refuse(ErrPrecondition, "storage %s is disabled", id)
	case !list[i].active:
		return nodeStorage{}, refuse(ErrPrecondition, "storage %s is not active on node %s", id, node)
	case !slices.Contains(list[i].content, content):
		return nodeStorage{}, refuse(ErrPrecondition, "storage %s does not hold content %q (it holds: %s)", id, content, line(strings.Join(list[i].content, ", "), 200))
	}
	return list[i], nil
}

// checkVolume refuses a volume (an ISO image or a container template)
// that the node's storage does not list.
func (c *Client) checkVolume(ctx context.Context, list []nodeStorage, node, volid, content string) error {
	storage, _, _ := strings.Cut(volid, ":")
	if _, err := checkStorage(list, node, storage, content); err != nil {
		return err
	}
	var vols []struct {
		VolID pve.String `json:"volid"`
	}
	if err := c.get(ctx, pve.Path("nodes", node, "storage", storage, "content"), url.Values{"content": {content}}, &vols); err != nil {
		return err
	}
	for _, v := range vols {
		if string(v.VolID) == volid {
			return nil
		}
	}
	return refuse(ErrPrecondition, "volume %s does not exist on node %s", volid, node)
}

// diskKeyRe matches the configuration keys that hold a guest's disks.
var diskKeyRe = lazyre.New(`^((ide|sata|scsi|virtio)\d+|efidisk0|tpmstate0|rootfs|mp\d+)$`)

// diskStorages returns the storages of the guest's disks (CD-ROMs and
// bind mounts left out), from its current configuration.
func (c *Client) diskStorages(ctx context.Context, t Target) ([]string, error) {
	var cfg map[string]any
	if err := c.get(ctx, guestPath(t, "config"), nil, &cfg); err != nil {
		return nil, err
	}
	var out []string
	for k, v := range cfg {
		s, ok := v.(string)
		if !ok || !diskKeyRe.MatchString(k) || strings.Contains(s, "media=cdrom") {
			continue
		}
		vol, _, _ := strings.Cut(s, ",")
		storage, _, found := strings.Cut(vol, ":")
		if !found || strings.HasPrefix(vol, "/") || !ValidStorage(storage) {
			continue
		}
		if !slices.Contains(out, storage) {
			out = append(out, storage)
		}
	}
	slices.Sort(out)
	return out, nil
}

// clonePrecondition checks a clone against the fresh state of its source
// and the cluster.
func (c *Client) clonePrecondition(ctx context.Context, in CloneGuestInput, s GuestState, newid int) error {
	t := in.Target()
	who := describe(t, s)
	switch {
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case in.Linked && !s.Template:
		return refuse(ErrPrecondition, "%s is not a template; a linked clone can only be made from a template (leave linked out for a full copy)", who)
	case in.Type == TypeLXC && !in.Linked && s.Status == "running":
		return refuse(ErrPrecondition, "%s is running; Proxmox copies a running container only from a snapshot, which this operation does not offer (stop it first, or clone a template)", who)
	}
	if err := c.checkPoolNotProtected(in.Pool); err != nil {
		return err
	}
	view, err := c.readClusterView(ctx)
	if err != nil {
		return err
	}
	tn := in.targetNode()
	if tn != "" {
		if err := checkNodeOnline(view, tn); err != nil {
			return err
		}
	}
	if err := c.checkVMIDFree(ctx, view, newid); err != nil {
		return err
	}
	content := "images"
	if in.Type == TypeLXC {
		content = "rootdir"
	}
	list, err := c.nodeStorages(ctx, in.Node)
	if err != nil {
		return err
	}
	if in.Storage != "" {
		st, err := checkStorage(list, in.Node, in.Storage, content)
		if err != nil {
			return err
		}
		if tn != "" {
			if !st.shared {
				return refuse(ErrPrecondition, "storage %s is not shared; a clone placed on another node (%s) needs shared storage", in.Storage, tn)
			}
			tlist, err := c.nodeStorages(ctx, tn)
			if err != nil {
				return err
			}
			if _, err := checkStorage(tlist, tn, in.Storage, content); err != nil {
				return err
			}
		}
		return nil
	}
	if tn == "" {
		return nil
	}
	// Without a storage each disk stays on its storage, which the target
	// node must see too: Proxmox refuses local storage.
	disks, err := c.diskStorages(ctx, t)
	if err != nil {
		return err
	}
	for _, d := range disks {
		i := slices.IndexFunc(list, func(s nodeStorage) bool { return s.id == d })
		if i < 0 || !list[i].shared {
			return refuse(ErrPrecondition, "%s has a disk on storage %s, which is not shared; a clone can only be placed on another node (%s) from shared storage (leave target out, or give a shared storage)", who, d, tn)
		}
	}
	return nil
}

// createPrecondition checks a create against the cluster: the VMID is
// free, the node online, the storage usable, the ISO or template there.
func (c *Client) createPrecondition(ctx context.Context, sp createSpec, t Target) error {
	if err := c.checkPoolNotProtected(sp.pool); err != nil {
		return err
	}
	view, err := c.readClusterView(ctx)
	if err != nil {
		return err
	}
	if err := checkNodeOnline(view, t.Node); err != nil {
		return err
	}
	if err := c.checkVMIDFree(ctx, view, t.VMID); err != nil {
		return err
	}
	list, err := c.nodeStorages(ctx, t.Node)
	if err != nil {
		return err
	}
	if _, err := checkStorage(list, t.Node, sp.storage, sp.content); err != nil {
		return err
	}
	if sp.volume != "" {
		return c.checkVolume(ctx, list, t.Node, sp.volume, sp.volumeContent)
	}
	return nil
}
