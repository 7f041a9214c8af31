package proxmoxsafe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// The restore's proof compares the restored guest's configuration with
// the one in the archive (GET /nodes/{node}/vzdump/extractconfig, read at
// the fresh read; the gateway never reads it: it returns raw config
// text). What a restore changes by design is left out of the comparison
// (qemu-server restore_update_config_line, pve-container Create.pm
// sanitize_and_merge_config):
//
//   - a disk's volume and format: the restore allocates new volumes
//     (vm-<newid>-disk-N, on the target storage); the rest of the drive
//     string (size, cache, …) must match. A CD-ROM is kept as it is; a
//     disk with backup=0 is not restored;
//   - with unique=1, a network device's MAC address and smbios1's uuid;
//   - vmgenid (always new), lock, parent, unused disks, snapshots and
//     pending changes (never in an archive that Proxmox restores), the
//     description (comment lines in the archive), digest;
//   - a container's raw lxc.* lines (restored only by root@pam, never by
//     a token) and template (set by the restore itself).
//
// Values are kept as digests (TextDigest), never quoted: the receipt goes
// to the caller. Keys whose value may carry a secret (what GuestConfig
// redacts) are compared by presence alone.

// maxArchiveConfigKeys bounds the keys compared.
const maxArchiveConfigKeys = 256

// archivePresent is what a secret-bearing key's digest is replaced by.
// (The disk keys are guest_destroy_facts.go's qemuDiskKey and lxcDiskKey;
// unused disks are left out before them.)
const archivePresent = "present"

// archiveConfig reads the archive's configuration and returns what the
// restored guest's must read back, key by key, as digests.
func (c *Client) archiveConfig(ctx context.Context, node, volid string, t GuestType, unique bool) (map[string]string, error) {
	var text pve.String
	if err := c.get(ctx, pve.Path("nodes", node, "vzdump", "extractconfig"), url.Values{"volume": {volid}}, &text); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for l := range strings.Lines(string(text)) {
		l = strings.TrimRight(l, "\r\n")
		if strings.HasPrefix(l, "[") {
			break // a snapshot or the pending section: not restored
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, "#") || !configKeyRe.MatchString(k) {
			continue
		}
		v = strings.TrimSpace(v)
		if cmp, keep := restoredValue(k, v, t, unique); keep && len(out) < maxArchiveConfigKeys {
			out[k] = cmp
		}
	}
	return out, nil
}

// restoredValue is the value of archive key k as the comparison sees it
// (a digest, or "present" for a secret-bearing key); false for a key a
// restore changes by design.
func restoredValue(k, v string, t GuestType, unique bool) (string, bool) {
	lk := strings.ToLower(k)
	switch {
	case lk == "lock" || lk == "parent" || lk == "digest" || lk == "vmgenid" || lk == "description" || lk == "template" ||
		strings.HasPrefix(lk, "unused") || strings.HasPrefix(lk, "lxc"):
		return "", false
	case (t == TypeQEMU && qemuDiskKey.MatchString(lk)) || (t == TypeLXC && lxcDiskKey.MatchString(lk)):
		if strings.Contains(v, "media=cdrom") {
			break
		}
		if strings.Contains(","+v+",", ",backup=0,") {
			return "", false
		}
		v = withoutProps(dropVolume(v), "format")
	case strings.HasPrefix(lk, "net") && unique:
		v = withoutMAC(v, t)
	case lk == "smbios1" && unique:
		v = withoutProps(v, "uuid")
	}
	raw, _ := json.Marshal(v)
	if redactConfig(k, raw) {
		return archivePresent, true
	}
	return TextDigest(v), true
}

// dropVolume removes a drive string's volume: its first part when that
// is not a key=value property (qemu "local-lvm:vm-100-disk-0,size=8G"),
// or its file= / volume= property.
func dropVolume(v string) string {
	parts := strings.Split(v, ",")
	if len(parts) > 0 && !strings.Contains(parts[0], "=") {
		parts = parts[1:]
	}
	return withoutProps(strings.Join(parts, ","), "file", "volume")
}

// withoutProps removes the named key=value properties of a property
// string, keeping the others' order.
func withoutProps(v string, keys ...string) string {
	parts := strings.Split(v, ",")
	parts = slices.DeleteFunc(parts, func(p string) bool {
		k, _, _ := strings.Cut(p, "=")
		return slices.Contains(keys, k)
	})
	return strings.Join(parts, ",")
}

// withoutMAC removes a network device's MAC address: a VM's as the value
// of its model (virtio=BC:24:…) or macaddr=, a container's hwaddr=.
func withoutMAC(v string, t GuestType) string {
	if t == TypeLXC {
		return withoutProps(v, "hwaddr")
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		if i == 0 && ok && k != "bridge" && k != "macaddr" {
			parts[i] = k
		}
	}
	return withoutProps(strings.Join(parts, ","), "macaddr")
}

// restoredDiffers compares the restored guest's configuration with the
// archive's (ng.Archive) and names the first key that differs, "" when
// every key reads back.
func restoredDiffers(ng *NewGuest, cfg map[string]any) string {
	for _, k := range sortedConfigKeys(ng.Archive) {
		got, ok := configString(cfg[k])
		if !ok {
			return fmt.Sprintf("%s is missing", k)
		}
		if v, _ := restoredValue(k, got, ng.Type, ng.Unique); v != ng.Archive[k] {
			return fmt.Sprintf("%s differs", k)
		}
	}
	return ""
}
