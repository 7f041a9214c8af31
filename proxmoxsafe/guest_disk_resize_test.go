package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestResizeDiskHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		in            proxmoxsafe.ResizeDiskInput
		path          string
		before, after string
		observed      string
	}{
		{"grow a VM disk by 10G", resizeIn("pve2", "qemu", 103, "scsi0", "+10G"), "/nodes/pve2/qemu/103/resize", "100G", "110G", "scsi0 is 110G"},
		{"grow a running container to an absolute size", resizeIn("pve1", "lxc", 200, "rootfs", "12G"), "/nodes/pve1/lxc/200/resize", "8G", "12G", "rootfs is 12G"},
		{"grow by a fraction", resizeIn("pve2", "qemu", 103, "scsi0", "+0.5G"), "/nodes/pve2/qemu/103/resize", "100G", "102912M", "scsi0 is 102912M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newConfigEnv(t, nil)
			digest := configDigest(t, e, tt.in.Node, tt.in.Type, tt.in.VMID)
			e.fake.ResetRequests()
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.ResizeDisk(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "PUT" || muts[0].Path != tt.path {
				t.Fatalf("mutating requests = %v, want one PUT %s", reqLines(muts), tt.path)
			}
			if f := muts[0].Form; f.Get("disk") != in.Disk || f.Get("size") != in.Size || f.Get("digest") != digest || len(f) != 3 {
				t.Errorf("form = %v, want disk, size as given and the digest %s", f, digest)
			}
			if r.Task.Type != "resize" {
				t.Errorf("task type = %q, want resize", r.Task.Type)
			}
			want := []proxmoxsafe.ConfigChange{{Key: in.Disk, Current: tt.before, New: tt.after}}
			if !slices.Equal(r.Changes, want) {
				t.Errorf("changes = %+v, want %+v", r.Changes, want)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed, verified %q", o, tt.observed)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			if p := recs[0].Params; !slices.Equal(p, []string{"disk=" + in.Disk, "size=" + in.Size}) || recs[0].Op != proxmoxsafe.OpResizeDisk {
				t.Errorf("audit op %s params %v", recs[0].Op, p)
			}
		})
	}
}

func resizeIn(node string, typ proxmoxsafe.GuestType, vmid int, disk, size string) proxmoxsafe.ResizeDiskInput {
	in := proxmoxsafe.ResizeDiskInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Disk: disk, Size: size}
	in.Approval = in.ApprovalPhrase()
	return in
}
