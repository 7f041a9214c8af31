package proxmoxtest

import (
	"net/url"
	"testing"
)

// TestNewerParameterRefusedByOlderVersion: a parameter the cluster's PVE
// version does not have yet is refused like any unknown property (400,
// Proxmox's errors shape, nothing done), and accepted on the version that
// has it (schema-subset-pve8.4.json lacks with-conntrack-state).
func TestNewerParameterRefusedByOlderVersion(t *testing.T) {
	t.Parallel()
	form := url.Values{"target": {"pve2"}, "with-conntrack-state": {"1"}}
	for _, tc := range []struct {
		version string
		code    int
	}{{"8.4.1", 400}, {DefaultVersion, 200}} {
		c := DemoCluster()
		c.Version = tc.version
		s := NewServer(c)
		a := post(t, s, "/nodes/pve3/qemu/107/migrate", form)
		if a.code != tc.code {
			t.Errorf("%s: POST migrate with with-conntrack-state: %d %s, want %d", tc.version, a.code, a.raw, tc.code)
		}
		if tc.code == 400 {
			errs, _ := a.body["errors"].(map[string]any)
			if errs["with-conntrack-state"] != "property is not defined in schema and the schema does not allow additional properties" ||
				len(errs) != 1 || a.body["data"] != nil {
				t.Errorf("%s: body %s, want Proxmox's unknown-property error", tc.version, a.raw)
			}
			if s.cluster.guest(107).Node != "pve3" {
				t.Errorf("%s: the refused migration moved the guest", tc.version)
			}
		}
		s.Close()
	}
}

// TestStorageTypeEnumByVersion: GET /storage filters by the storage types
// of the cluster's release (schema-subset 7.4, 8.4, 9.1): glusterfs until
// 8.4 (9.0 dropped it), esxi from 8.x. A type the release lacks is refused
// like any value outside the enumeration (400, Proxmox's message listing
// that release's types); one it has filters the list.
func TestStorageTypeEnumByVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version   string
		glusterfs bool
		esxi      bool
		enum      string
	}{
		{"7.4-16", true, false, "btrfs, cephfs, cifs, dir, glusterfs, iscsi, iscsidirect, lvm, lvmthin, nfs, pbs, rbd, zfs, zfspool"},
		{"8.4.1", true, true, "btrfs, cephfs, cifs, dir, esxi, glusterfs, iscsi, iscsidirect, lvm, lvmthin, nfs, pbs, rbd, zfs, zfspool"},
		{DefaultVersion, false, true, "btrfs, cephfs, cifs, dir, esxi, iscsi, iscsidirect, lvm, lvmthin, nfs, pbs, rbd, zfs, zfspool"},
	} {
		c := DemoCluster()
		c.Version = tc.version
		c.Storages = DefaultStorages(c)
		if tc.glusterfs { // a release without the plugin has no such storage
			c.Storages = append(c.Storages, &Storage{ID: "gluster", Type: "glusterfs", Content: []string{"images"}, Shared: true, Total: 1 << 40})
		}
		s := NewServer(c)
		for _, typ := range []struct {
			name string
			has  bool
		}{{"glusterfs", tc.glusterfs}, {"esxi", tc.esxi}, {"lvmthin", true}} {
			a := get(t, s, "/storage?type="+typ.name)
			if !typ.has {
				errs, _ := a.body["errors"].(map[string]any)
				want := "value '" + typ.name + "' does not have a value in the enumeration '" + tc.enum + "'"
				if a.code != 400 || errs["type"] != want || len(errs) != 1 {
					t.Errorf("%s: GET /storage?type=%s: %d %s, want 400 with %q", tc.version, typ.name, a.code, a.raw, want)
				}
				continue
			}
			data, _ := a.body["data"].([]any)
			want := map[string]int{"glusterfs": 1, "esxi": 0, "lvmthin": 1}[typ.name]
			if a.code != 200 || len(data) != want {
				t.Errorf("%s: GET /storage?type=%s: %d %s, want 200 with %d storages", tc.version, typ.name, a.code, a.raw, want)
			}
		}
		s.Close()
	}
}
