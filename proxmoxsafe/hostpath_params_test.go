package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGatewayHostPathsRefused: a gateway write that gives a guest a path
// on the node (a disk that is a host block device or file, a disk
// imported from a host file, a container root file system, template or a
// restore archive that is a host path) is refused before any request,
// even with the exact approval phrase: Proxmox allows arbitrary file
// system paths to root@pam only, so logged in as root@pam by password it
// is host passthrough. The same writes with storage volumes are not
// refused for a path (a config write is still refused, as the config
// class's request).
func TestGatewayHostPathsRefused(t *testing.T) {
	t.Parallel()
	refused := []struct {
		name, method, path string
		params             map[string]string
		param              string
	}{
		{"host block device", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"scsi1": "/dev/sda"}, "scsi1"},
		{"host file with options", "PUT", "/nodes/pve1/qemu/101/config", map[string]string{"virtio2": "/var/lib/vz/x.raw,cache=none"}, "virtio2"},
		{"file= key", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"sata3": "media=disk,file=/dev/nvme0n1"}, "sata3"},
		{"import from a host file", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"scsi2": "local-lvm:0,import-from=/root/x.qcow2"}, "scsi2"},
		{"container root file system", "PUT", "/nodes/pve1/lxc/200/config", map[string]string{"rootfs": "volume=/srv/host,size=8G"}, "rootfs"},
		{"container from a host file", "POST", "/nodes/pve1/lxc", map[string]string{"vmid": "150", "ostemplate": "/etc/shadow"}, "ostemplate"},
		{"restore from a host file", "POST", "/nodes/pve1/qemu", map[string]string{"vmid": "151", "archive": " /root/dump.vma"}, "archive"},
		{"cdrom, Proxmox's alias of ide2", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"cdrom": "/etc/shadow"}, "cdrom"},
		{"quoted file=", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"scsi3": `file="/dev/sda"`}, "scsi3"},
		{"EFI disk", "POST", "/nodes/pve1/qemu/101/config", map[string]string{"efidisk0": "/dev/sdb"}, "efidisk0"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			_, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: tc.params,
				Approval: exactGatewayPhrase(tc.method, tc.path, tc.params)})
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, "parameter "+tc.param+" names a path on the node", true)
		})
	}
	for _, params := range []map[string]string{
		{"scsi1": "local-lvm:8"},
		{"ide2": "local:iso/debian.iso,media=cdrom"},
		{"cdrom": "local:iso/debian.iso"},
		{"scsi2": "local-lvm:0,import-from=local:import/x.qcow2"},
		{"description": "/dev/sda is the root disk"}, // not a volume
	} {
		t.Run("volume "+strings.Join(keysOf(params), ","), func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			// A config write is the config class's, refused as such
			// (guest_config_set), but not for a host path.
			_, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: "POST", Path: "/nodes/pve1/qemu/101/config", Params: params})
			if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "SetGuestConfig") || strings.Contains(err.Error(), "path on the node") {
				t.Fatalf("err = %v, want only the dedicated operation's refusal", err)
			}
			if got := e.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests = %v, want none", reqLines(got))
			}
		})
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
