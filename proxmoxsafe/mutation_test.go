package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func powerIn(node string, typ proxmoxsafe.GuestType, vmid int, a proxmoxsafe.PowerAction) proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{Node: node, Type: typ, VMID: vmid, Action: a}
	in.Approval = proxmoxsafe.ApprovalPhrase(string(a), in.Target())
	return in
}

func TestApprovalPhrase(t *testing.T) {
	t.Parallel()
	got := proxmoxsafe.ApprovalPhrase("shutdown", proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 101})
	if got != "APPROVE shutdown pve1/qemu/101" {
		t.Errorf("power phrase = %q", got)
	}
	got = proxmoxsafe.ApprovalPhrase("snapshot", proxmoxsafe.Target{Node: "pve1", Type: "lxc", VMID: 200, Snapshot: "pre-up"})
	if got != "APPROVE snapshot pve1/lxc/200/pre-up" {
		t.Errorf("snapshot phrase = %q", got)
	}
}

func TestGuestPowerHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node   string
		typ    proxmoxsafe.GuestType
		vmid   int
		action proxmoxsafe.PowerAction
		task   string
	}{
		{"pve1", "qemu", 101, proxmoxsafe.ActionStart, "qmstart"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionShutdown, "qmshutdown"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionReboot, "qmreboot"},
		{"pve1", "qemu", 100, proxmoxsafe.ActionStop, "qmstop"},
		{"pve1", "qemu", 102, proxmoxsafe.ActionStop, "qmstop"}, // a paused VM can be stopped
		{"pve2", "lxc", 201, proxmoxsafe.ActionStart, "vzstart"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionShutdown, "vzshutdown"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionReboot, "vzreboot"},
		{"pve1", "lxc", 200, proxmoxsafe.ActionStop, "vzstop"},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ)+"/"+string(tc.action), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			rec, err := e.client.GuestPower(t.Context(), powerIn(tc.node, tc.typ, tc.vmid, tc.action))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Task.Node != tc.node || rec.Task.ID != itoa(tc.vmid) || !strings.HasPrefix(rec.UPID, "UPID:"+tc.node+":") {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/" + string(tc.action)
			if len(mut) != 1 || reqLine(mut[0]) != want || len(mut[0].Form) != 0 {
				t.Errorf("mutating requests = %v, want one %q without params", reqLines(mut), want)
			}
			// The precondition read comes first.
			all := reqLines(e.requests())
			wantAll := []string{"GET /nodes/" + tc.node + "/" + string(tc.typ) + "/" + itoa(tc.vmid) + "/status/current", want}
			if !slices.Equal(all, wantAll) {
				t.Errorf("requests = %v, want %v", all, wantAll)
			}
			for _, ev := range []string{`"event":"approved"`, `"event":"submitted"`, rec.UPID} {
				if !strings.Contains(e.audit.String(), ev) {
					t.Errorf("audit log lacks %s:\n%s", ev, e.audit.String())
				}
			}
			if n, err := proxmoxsafe.VerifyAuditLog(strings.NewReader(e.audit.String())); err != nil || n != 2 {
				t.Errorf("audit log verifies %d records, err %v", n, err)
			}
		})
	}
}

func TestGuestPowerHAManaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	rec, err := e.client.GuestPower(t.Context(), powerIn("pve2", "qemu", 105, proxmoxsafe.ActionShutdown))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.HAManaged || rec.Task.Type != "hastop" || !strings.Contains(rec.Note, "HA manager") {
		t.Errorf("receipt = %+v", rec)
	}
}

func TestSnapshotGuestHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   proxmoxsafe.SnapshotGuestInput
		form map[string]string
		task string
	}{
		{"qemu with vmstate", proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 100, Name: "pre-upgrade", Description: "before the upgrade", VMState: true},
			map[string]string{"snapname": "pre-upgrade", "description": "before the upgrade", "vmstate": "1"}, "qmsnapshot"},
		{"qemu plain", proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "qemu", VMID: 101, Name: "s1"},
			map[string]string{"snapname": "s1"}, "qmsnapshot"},
		{"lxc", proxmoxsafe.SnapshotGuestInput{Node: "pve1", Type: "lxc", VMID: 200, Name: "after_fix", Description: "two\nlines"},
			map[string]string{"snapname": "after_fix", "description": "two\nlines"}, "vzsnapshot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			in := tc.in
			in.Approval = proxmoxsafe.ApprovalPhrase("snapshot", in.Target())
			rec, err := e.client.SnapshotGuest(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Task.Type != tc.task || rec.Target.Snapshot != in.Name {
				t.Errorf("receipt = %+v", rec)
			}
			mut := e.fake.MutatingRequests()
			want := "POST /nodes/" + in.Node + "/" + string(in.Type) + "/" + itoa(in.VMID) + "/snapshot"
			if len(mut) != 1 || reqLine(mut[0]) != want {
				t.Fatalf("mutating requests = %v, want %q", reqLines(mut), want)
			}
			got := map[string]string{}
			for k := range mut[0].Form {
				got[k] = mut[0].Form.Get(k)
			}
			if len(got) != len(tc.form) {
				t.Errorf("form = %v, want %v", got, tc.form)
			}
			for k, v := range tc.form {
				if got[k] != v {
					t.Errorf("form[%s] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestAuditFailureBlocksTheMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.Audit = proxmoxsafe.NewAuditLog(failingWriter{}) })
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrAudit) || !strings.Contains(err.Error(), "no action was taken") {
		t.Fatalf("err = %v, want ErrAudit", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests after audit failure: %v", reqLines(m))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestUpstreamRefusalIsAuditedAsFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/qemu/100/status/stop", Status: 403, Reason: "Permission check failed (/vms/100, VM.PowerMgmt)"})
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if !strings.Contains(err.Error(), "lacks privilege VM.PowerMgmt on /vms/100") {
		t.Errorf("403 not explained: %v", err)
	}
	if !strings.Contains(e.audit.String(), `"event":"failed"`) {
		t.Errorf("audit lacks the failed record:\n%s", e.audit.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
