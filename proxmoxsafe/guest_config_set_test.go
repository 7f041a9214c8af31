package proxmoxsafe_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestSetGuestConfigHappyPath(t *testing.T) {
	t.Parallel()
	const desc = "Build box\nowned by ci"
	tests := []struct {
		name         string
		in           proxmoxsafe.SetGuestConfigInput
		method, path string
		form         map[string]string // without the digest
		sync         bool
		changes      []proxmoxsafe.ConfigChange
		pending      []string
		observed     string
		phrase       string
	}{
		{name: "stopped VM: everything applies", method: "POST", path: "/nodes/pve2/qemu/103/config",
			in:   configIn("pve2", "qemu", 103, map[string]string{"cores": "6", "memory": "4096", "tags": "ci,build", "description": desc}),
			form: map[string]string{"cores": "6", "memory": "4096", "tags": "build;ci", "description": desc},
			changes: []proxmoxsafe.ConfigChange{
				{Key: "cores", Current: "8", New: "6"}, {Key: "description", New: digestOf(desc)},
				{Key: "memory", Current: "16384", New: "4096"}, {Key: "tags", Current: "ci", New: "build;ci"}},
			observed: "applied: cores=6, description=" + digestOf(desc) + ", memory=4096, tags=build;ci",
			phrase:   "APPROVE config pve2/qemu/103 cores=6 description=" + digestOf(desc) + " memory=4096 tags=build;ci"},
		{name: "running VM: cores wait for the next start, the name applies", method: "POST", path: "/nodes/pve1/qemu/100/config",
			in:       configIn("pve1", "qemu", 100, map[string]string{"cores": "8", "name": "web-01b"}),
			form:     map[string]string{"cores": "8", "name": "web-01b"},
			changes:  []proxmoxsafe.ConfigChange{{Key: "cores", Current: "4", New: "8"}, {Key: "name", Current: "web-01", New: "web-01b"}},
			pending:  []string{"cores"},
			observed: "applied: name=web-01b; pending until the guest's next start (not applied yet): cores=8",
			phrase:   "APPROVE config pve1/qemu/100 cores=8 name=web-01b"},
		{name: "running container: PUT answers null, delete tags", method: "PUT", path: "/nodes/pve1/lxc/200/config", sync: true,
			in:       configIn("pve1", "lxc", 200, map[string]string{"cores": "2", "hostname": "dns-01b"}, "tags"),
			form:     map[string]string{"cores": "2", "hostname": "dns-01b", "delete": "tags"},
			changes:  []proxmoxsafe.ConfigChange{{Key: "cores", Current: "1", New: "2"}, {Key: "hostname", Current: "dns-01", New: "dns-01b"}, {Key: "tags", Current: "dns;infra", Delete: true}},
			observed: "applied: cores=2, hostname=dns-01b, deleted tags",
			phrase:   "APPROVE config pve1/lxc/200 cores=2 hostname=dns-01b delete=tags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newConfigEnv(t, nil)
			if got := tt.in.ApprovalPhrase(); got != tt.phrase {
				t.Errorf("phrase = %q, want %q", got, tt.phrase)
			}
			digest := configDigest(t, e, tt.in.Node, tt.in.Type, tt.in.VMID)
			e.fake.ResetRequests()
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.SetGuestConfig(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != tt.method || muts[0].Path != tt.path {
				t.Fatalf("mutating requests = %v, want one %s %s", reqLines(muts), tt.method, tt.path)
			}
			f := muts[0].Form
			if f.Get("digest") != digest || len(f) != len(tt.form)+1 {
				t.Errorf("form = %v, want %v and digest %s", f, tt.form, digest)
			}
			for k, v := range tt.form {
				if f.Get(k) != v {
					t.Errorf("form %s = %q, want %q", k, f.Get(k), v)
				}
			}
			if tt.sync != r.Synchronous || (tt.sync && r.UPID != "") || (!tt.sync && r.Task.Type != "qmconfig") {
				t.Errorf("receipt: synchronous %v, upid %q, task %q", r.Synchronous, r.UPID, r.Task.Type)
			}
			if !slices.Equal(r.Changes, tt.changes) {
				t.Errorf("changes = %+v\nwant %+v", r.Changes, tt.changes)
			}
			o := r.Outcome
			if o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed || !slices.Equal(o.Pending, tt.pending) {
				t.Errorf("outcome = %+v, want completed, observed %q, pending %v", o, tt.observed, tt.pending)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			if strings.Contains(e.audit.String(), "owned by ci") {
				t.Error("the audit log quotes the description; it must bind it by digest")
			}
			if want := strings.Fields(tt.phrase)[3:]; !slices.Equal(recs[0].Params, want) {
				t.Errorf("audit params = %v, want %v", recs[0].Params, want)
			}
		})
	}
}

func digestOf(s string) string {
	return proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Type: "qemu"}, Set: map[string]string{"description": s}}.ApprovalPhrase()[len("APPROVE config /qemu/0 description="):]
}

// concurrentSink changes guest 103's config in the fake when the
// "approved" record is written: right between the precondition's read and
// the request, as another user would.
type concurrentSink struct {
	next proxmoxsafe.AuditSink
	fake *proxmoxtest.Server
}

func (s concurrentSink) Record(ctx context.Context, rec proxmoxsafe.AuditRecord) error {
	if rec.Event == proxmoxsafe.AuditApproved {
		s.fake.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.Description = "changed by someone else " + strconv.FormatInt(concurrentEdits.Add(1), 10)
				}
			}
		})
	}
	return s.next.Record(ctx, rec)
}

// TestConfigDigestRefusesConcurrentChange: the digest sent with the
// request makes Proxmox refuse instead of overwriting a change made after
// the config was read; nothing changes.
func TestConfigDigestRefusesConcurrentChange(t *testing.T) {
	t.Parallel()
	e := newConfigEnvWithSink(t)
	_, err := e.client.SetGuestConfig(t.Context(), configIn("pve2", "qemu", 103, map[string]string{"cores": "2"}))
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "checksum mismatch") {
		t.Fatalf("err = %v, want Proxmox's checksum mismatch", err)
	}
	if g, _ := e.fake.Guest(103); g.CPUs != 8 {
		t.Errorf("cores = %d, want unchanged 8", g.CPUs)
	}
	_, err = e.client.ResizeDisk(t.Context(), proxmoxsafe.ResizeDiskInput{
		GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103},
		Disk:     "scsi0",
		Size:     "+1G",
		Controls: proxmoxsafe.Controls{Approval: "APPROVE resize pve2/qemu/103 disk=scsi0 size=+1G", Wait: fastVerify()},
	})
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("resize err = %v, want the task to fail with Proxmox's checksum mismatch", err)
	}
}

func newConfigEnvWithSink(t *testing.T) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(canaryDemo())
	fake.StartTLS()
	return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassConfig}}
		c.Audit = concurrentSink{next: c.Audit, fake: fake}
	})
}

// TestConfigChangeDuringApprovalRefused: an approver that takes time
// while someone changes the config: the fresh read after the approval
// sees another digest and refuses before sending.
func TestConfigChangeDuringApprovalRefused(t *testing.T) {
	t.Parallel()
	var fake *proxmoxtest.Server
	slow := approverFunc(func(context.Context, proxmoxsafe.ApprovalRequest) error {
		fake.Update(func(c *proxmoxtest.Cluster) {
			for _, g := range c.Guests {
				if g.VMID == 103 {
					g.Tags = append(g.Tags, "touched")
				}
			}
		})
		return nil
	})
	fake = proxmoxtest.NewUnstartedServer(canaryDemo())
	fake.StartTLS()
	e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassConfig}}
		c.Approvers = []proxmoxsafe.Approver{slow}
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassConfig: {"test"}}
	})
	_, err := e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve2", Type: "qemu", VMID: 103}, Set: map[string]string{"cores": "2"}})
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "changed while the approval was pending") {
		t.Fatalf("err = %v", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests = %v", reqLines(m))
	}
}

func configIn(node string, typ proxmoxsafe.GuestType, vmid int, set map[string]string, del ...string) proxmoxsafe.SetGuestConfigInput {
	in := proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: node, Type: typ, VMID: vmid}, Set: set, Delete: del}
	in.Approval = in.ApprovalPhrase()
	return in
}
