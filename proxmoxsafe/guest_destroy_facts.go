package proxmoxsafe

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// maxCloneScan caps the configurations a template's destroy reads to
// look for linked clones; guests beyond it count as unchecked.
const maxCloneScan = 200

// rawConfig reads GET …/config as text values (numbers as written);
// values that are not scalars (a container's raw "lxc" lines) are left
// out: they hold no volume.
func (c *Client) rawConfig(ctx context.Context, t Target) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := c.get(ctx, guestPath(t, "config"), nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s pve.String
		if json.Unmarshal(v, &s) == nil {
			out[k] = string(s)
		}
	}
	return out, nil
}

// Config keys that hold volumes (qemu-server's drive keys, pve-container's
// mount points) and unused disks.
var (
	qemuDiskKey = lazyre.New(`^((ide|sata|scsi|virtio)[0-9]+|efidisk0|tpmstate0|unused[0-9]+)$`)
	lxcDiskKey  = lazyre.New(`^(rootfs|mp[0-9]+|unused[0-9]+)$`)
	// volOwner reads the VMID from a volume's last path component:
	// vm-101-disk-0, base-100-disk-0, subvol-101-disk-0, vm-101-cloudinit.
	volOwner = lazyre.New(`^(?:vm|base|subvol|basevol)-([0-9]+)-`)
)

// configDisks lists the volumes the destroy deletes, sorted by key. CD-ROM
// media (except a cloud-init drive, which Proxmox deletes), "none" and
// host paths (pass-through devices, bind mounts) are not volumes of the
// guest and are left out.
func configDisks(typ GuestType, conf map[string]string) []destroyDisk {
	keyRe := qemuDiskKey
	if typ == TypeLXC {
		keyRe = lxcDiskKey
	}
	var out []destroyDisk
	for k, v := range conf {
		if !keyRe.MatchString(k) {
			continue
		}
		d := destroyDisk{key: k}
		for i, part := range strings.Split(v, ",") {
			name, val, hasEq := strings.Cut(part, "=")
			switch {
			case i == 0 && (!hasEq || name == "file" || name == "volume"):
				d.volume = val
				if !hasEq {
					d.volume = name
				}
			case name == "file" || name == "volume":
				d.volume = val
			case name == "size":
				d.size = val
			case name == "media" && val == "cdrom" && !strings.Contains(v, "cloudinit"):
				d.volume = ""
			}
		}
		if d.volume == "" || d.volume == "none" || strings.HasPrefix(d.volume, "/") || !strings.Contains(d.volume, ":") {
			continue
		}
		d.volume = line(d.volume, 128)
		d.size = line(d.size, 16)
		_, volname, _ := strings.Cut(d.volume, ":")
		last := volname[strings.LastIndex(volname, "/")+1:]
		if m := volOwner.FindStringSubmatch(last); m != nil {
			d.owner, _ = strconv.Atoi(m[1])
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b destroyDisk) int { return strings.Compare(a.key, b.key) })
	return out
}

// linkedClones finds the guests whose configuration uses a base volume
// of template t ("<storage>:base-<vmid>-disk-N/…"), reading the
// configurations of the guests of the same type on allowlisted nodes
// (at most maxCloneScan). It returns what it found and how many guests
// it could not check.
func (c *Client) linkedClones(ctx context.Context, t Target) (found []string, unchecked int, err error) {
	raw, err := c.vmResources(ctx)
	if err != nil {
		return nil, 0, err
	}
	baseRe := regexp.MustCompile(`(?:^|[:/])(?:base|basevol)-` + strconv.Itoa(t.VMID) + `-disk-[0-9]+[^/,]*/`)
	read := 0
	for i := range raw {
		r := &raw[i]
		vmid, node := int(r.VMID), string(r.Node)
		if r.Type != string(t.Type) || vmid == t.VMID || bool(r.Template) {
			continue
		}
		if !c.policy.nodes[node] || read >= maxCloneScan {
			unchecked++
			continue
		}
		read++
		other := Target{Node: node, Type: t.Type, VMID: vmid}
		conf, err := c.rawConfig(ctx, other)
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, err
			}
			unchecked++ // gone or moved since the listing: not a reason to refuse
			continue
		}
		for _, d := range configDisks(t.Type, conf) {
			if baseRe.MatchString(d.volume) {
				found = append(found, describe(other, GuestState{Name: line(string(r.Name), maxNameLen)})+" uses "+d.volume)
				break
			}
		}
	}
	return found, unchecked, nil
}

// guestListed reads /cluster/resources and describes the entry of the
// guest's VMID ("qemu on pve1, stopped, locked destroyed"), or returns ""
// when there is none: the proof that a destroy completed.
func (c *Client) guestListed(ctx context.Context, t Target) (string, error) {
	raw, err := c.vmResources(ctx)
	if err != nil {
		return "", err
	}
	for i := range raw {
		r := &raw[i]
		if int(r.VMID) != t.VMID || (r.Type != "qemu" && r.Type != "lxc") {
			continue
		}
		d := r.Type + " on " + line(string(r.Node), 64) + ", " + line(string(r.Status), 16)
		if r.Lock != "" {
			d += ", locked " + line(string(r.Lock), 32)
		}
		return d, nil
	}
	return "", nil
}
