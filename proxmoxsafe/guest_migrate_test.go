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

// migrateCluster: pve1 and pve2 online, pve3 offline, pve4 online but
// not allowlisted; storage "fast" exists on pve1 only; one guest per
// migration situation.
func migrateCluster(version string) *proxmoxtest.Cluster {
	return &proxmoxtest.Cluster{
		Name: "lab", Version: version,
		Nodes: []*proxmoxtest.Node{
			{Name: "pve1", Online: true, IP: "10.0.0.1"}, {Name: "pve2", Online: true, IP: "10.0.0.2"},
			{Name: "pve3", Online: false, IP: "10.0.0.3"}, {Name: "pve4", Online: true, IP: "10.0.0.4"},
		},
		Storages: []*proxmoxtest.Storage{
			{ID: "local", Type: "dir", Content: []string{"iso", "backup"}},
			{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}},
			{ID: "fast", Type: "zfspool", Content: []string{"images"}, Nodes: []string{"pve1"}},
		},
		Guests: []*proxmoxtest.Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "web", Status: "running", Uptime: 7200},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "disky", Status: "running", Uptime: 7200,
				LocalDisks: []proxmoxtest.LocalDisk{{VolID: "local-lvm:vm-101-disk-0", Size: 32 << 30}}},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "gpu", Status: "stopped", LocalResources: []string{"hostpci0"}},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "zfs", Status: "stopped", LocalDisks: []proxmoxtest.LocalDisk{{VolID: "fast:vm-103-disk-0", Size: 8 << 30}}},
			{VMID: 104, Node: "pve1", Type: "qemu", Name: "busy", Status: "running", Uptime: 7200, Lock: "backup"},
			{VMID: 105, Node: "pve1", Type: "qemu", Name: "ha", Status: "running", Uptime: 7200, HAManaged: true, HAState: "started"},
			{VMID: 106, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true},
			{VMID: 107, Node: "pve1", Type: "qemu", Name: "off", Status: "stopped"},
			{VMID: 108, Node: "pve1", Type: "qemu", Name: "db.example.com", Status: "stopped"},
			{VMID: 109, Node: "pve1", Type: "qemu", Name: "vip", Status: "stopped"},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Uptime: 7200},
			{VMID: 201, Node: "pve1", Type: "lxc", Name: "ct-off", Status: "stopped"},
		},
		Tokens: map[string]*proxmoxtest.Token{
			"automation@pve!mcp": {Secret: canary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
		},
	}
}

// newMigrateEnv: only the migrate class, on pve1, pve2, pve3 and the
// non-member pve9; guest 109 protected by VMID, "db" by name.
func newMigrateEnv(t *testing.T, version string, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnvWith(t, migrateCluster(version), func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:    []string{"pve1", "pve2", "pve3", "pve9"},
			Classes:         []proxmoxsafe.Class{proxmoxsafe.ClassMigrate},
			ProtectedGuests: []int{109},
			ProtectedNames:  []string{"db"},
		}
		if mod != nil {
			mod(c)
		}
	})
}

// migrateIn is an approved input (the phrase of its own options).
func migrateIn(typ proxmoxsafe.GuestType, vmid int, target string, opts func(*proxmoxsafe.MigrateGuestInput)) proxmoxsafe.MigrateGuestInput {
	in := proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid}, TargetNode: target}
	if opts != nil {
		opts(&in)
	}
	in.Approval = in.ApprovalPhrase()
	return in
}

func online(in *proxmoxsafe.MigrateGuestInput) { in.Online = true }

// Each mode: the precheck read, the one POST with exactly the approved
// form, the task type, the guest on the target afterwards (proved from
// /cluster/resources) and the audit trail with the bound parameters.
func TestMigrateHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       proxmoxsafe.MigrateGuestInput
		form     string
		precheck string // the precheck request, "" when none is expected
		taskType string
		observed string
		params   []string
	}{
		{name: "live VM", in: migrateIn("qemu", 100, "pve2", online), form: "online=1&target=pve2",
			precheck: "GET /nodes/pve1/qemu/100/migrate?target=pve2", taskType: "qmigrate", observed: "on node pve2 (running)", params: []string{"target=pve2", "online=1"}},
		{name: "live VM with local disks", in: migrateIn("qemu", 101, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Online, in.WithLocalDisks = true, true }),
			form: "online=1&target=pve2&with-local-disks=1", precheck: "GET /nodes/pve1/qemu/101/migrate?target=pve2", taskType: "qmigrate",
			observed: "on node pve2 (running)", params: []string{"target=pve2", "online=1", "with-local-disks=1"}},
		{name: "offline VM", in: migrateIn("qemu", 107, "pve2", nil), form: "target=pve2",
			precheck: "GET /nodes/pve1/qemu/107/migrate?target=pve2", taskType: "qmigrate", observed: "on node pve2 (stopped)", params: []string{"target=pve2"}},
		{name: "HA-managed VM", in: migrateIn("qemu", 105, "pve2", online), form: "online=1&target=pve2",
			precheck: "GET /nodes/pve1/qemu/105/migrate?target=pve2", taskType: "hamigrate", observed: "on node pve2 (running)", params: []string{"target=pve2", "online=1"}},
		{name: "container restart mode", in: migrateIn("lxc", 200, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Restart, in.Timeout = true, 30 }),
			form: "restart=1&target=pve2&timeout=30", precheck: "GET /nodes/pve1/lxc/200/migrate?target=pve2", taskType: "vzmigrate",
			observed: "on node pve2 (running)", params: []string{"target=pve2", "restart=1", "timeout=30"}},
		{name: "stopped container", in: migrateIn("lxc", 201, "pve2", nil), form: "target=pve2",
			precheck: "GET /nodes/pve1/lxc/201/migrate?target=pve2", taskType: "vzmigrate", observed: "on node pve2 (stopped)", params: []string{"target=pve2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newMigrateEnv(t, "", nil)
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.MigrateGuest(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "POST" || muts[0].Path != "/nodes/pve1/"+string(in.Type)+"/"+strconv.Itoa(in.VMID)+"/migrate" || muts[0].Form.Encode() != tt.form {
				t.Fatalf("mutating requests = %+v, want one POST with %q", muts, tt.form)
			}
			var prechecks []string
			for _, req := range e.requests() {
				if req.Method == "GET" && strings.HasSuffix(req.Path, "/migrate") {
					prechecks = append(prechecks, req.Method+" "+req.Path+"?"+req.Query.Encode())
				}
			}
			if !slices.Equal(prechecks, []string{tt.precheck}) {
				t.Errorf("precheck requests = %v, want %s", prechecks, tt.precheck)
			}
			if r.Task.Type != tt.taskType || r.TargetNode != "pve2" || r.Target.Node != "pve1" {
				t.Errorf("receipt = %+v", r)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != tt.observed {
				t.Errorf("outcome = %+v, want completed, verified %q", o, tt.observed)
			}
			if g, _ := e.fake.Guest(in.VMID); g.Node != "pve2" {
				t.Errorf("the fake has the guest on %s", g.Node)
			}
			if ha := tt.taskType == "hamigrate"; ha != strings.Contains(r.Note, "hamigrate") {
				t.Errorf("note = %q", r.Note)
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Fatalf("audit events = %v", got)
			}
			for _, rec := range recs[:2] {
				if !slices.Equal(rec.Params, tt.params) || rec.Op != proxmoxsafe.OpMigrateGuest || rec.Action != "migrate" {
					t.Errorf("audit record = %+v, want params %v", rec, tt.params)
				}
			}
		})
	}
}

// Every refusal says why, audits one refusal and sends nothing mutating;
// the input and policy refusals send nothing at all.
func TestMigrateRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		in      proxmoxsafe.MigrateGuestInput
		kind    error
		mention string
		noReq   bool
	}{
		{name: "class not enabled", mod: func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} },
			in: migrateIn("qemu", 100, "pve2", online), kind: proxmoxsafe.ErrNotAllowed, mention: `"migrate" mutation class is not enabled`, noReq: true},
		{name: "read-only", mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true },
			in: migrateIn("qemu", 100, "pve2", online), kind: proxmoxsafe.ErrNotAllowed, mention: "read-only", noReq: true},
		{name: "source not allowlisted", mod: func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = []string{"pve2"} },
			in: migrateIn("qemu", 100, "pve2", online), kind: proxmoxsafe.ErrNotAllowed, mention: `node "pve1" is not on the node allowlist`, noReq: true},
		{name: "target not allowlisted", in: migrateIn("qemu", 100, "pve4", online), kind: proxmoxsafe.ErrNotAllowed, mention: `node "pve4" is not on the node allowlist`, noReq: true},
		{name: "guest protected by VMID", in: migrateIn("qemu", 109, "pve2", nil), kind: proxmoxsafe.ErrNotAllowed, mention: "guest 109 is protected", noReq: true},
		{name: "guest protected by name", in: migrateIn("qemu", 108, "pve2", nil), kind: proxmoxsafe.ErrNotAllowed, mention: "protected name"},
		{name: "target is the source", in: migrateIn("qemu", 100, "pve1", online), kind: proxmoxsafe.ErrInvalidInput, mention: "target: must be another node", noReq: true},
		{name: "container live migration", in: migrateIn("lxc", 200, "pve2", online), kind: proxmoxsafe.ErrInvalidInput, mention: "not implemented live migration of containers", noReq: true},
		{name: "restart for a VM", in: migrateIn("qemu", 100, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Restart = true }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "restart: is only supported for lxc", noReq: true},
		{name: "local disks for a container", in: migrateIn("lxc", 201, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.WithLocalDisks = true }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "with_local_disks: is only supported for qemu", noReq: true},
		{name: "timeout without restart", in: migrateIn("lxc", 201, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Timeout = 60 }),
			kind: proxmoxsafe.ErrInvalidInput, mention: "timeout: is only accepted with restart", noReq: true},
		{name: "running VM offline", in: migrateIn("qemu", 100, "pve2", nil), kind: proxmoxsafe.ErrPrecondition, mention: "cannot migrate a running VM offline"},
		{name: "stopped VM online", in: migrateIn("qemu", 107, "pve2", online), kind: proxmoxsafe.ErrPrecondition, mention: "online applies to a running VM only"},
		{name: "running container without restart", in: migrateIn("lxc", 200, "pve2", nil), kind: proxmoxsafe.ErrPrecondition, mention: "only in restart mode"},
		{name: "stopped container with restart", in: migrateIn("lxc", 201, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Restart = true }),
			kind: proxmoxsafe.ErrPrecondition, mention: "restart mode applies to a running container only"},
		{name: "locked", in: migrateIn("qemu", 104, "pve2", online), kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "template", in: migrateIn("qemu", 106, "pve2", nil), kind: proxmoxsafe.ErrPrecondition, mention: "is a template"},
		{name: "target offline", in: migrateIn("qemu", 107, "pve3", nil), kind: proxmoxsafe.ErrPrecondition, mention: "target node pve3 is offline, not online"},
		{name: "target not a cluster member", in: migrateIn("qemu", 107, "pve9", nil), kind: proxmoxsafe.ErrPrecondition, mention: "pve9 is not a member of this cluster"},
		{name: "precheck: local disks", in: migrateIn("qemu", 101, "pve2", online), kind: proxmoxsafe.ErrPrecondition,
			mention: "disks on node-local storage (local-lvm:vm-101-disk-0): ask again with with_local_disks"},
		{name: "precheck: host device", in: migrateIn("qemu", 102, "pve2", nil), kind: proxmoxsafe.ErrPrecondition, mention: "host devices of this node (hostpci0)"},
		{name: "precheck: storage missing on the target", in: migrateIn("qemu", 103, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.WithLocalDisks = true }),
			kind: proxmoxsafe.ErrPrecondition, mention: "Proxmox does not allow node pve2 as a target: storage not available there: fast"},
		{name: "no approval", in: func() proxmoxsafe.MigrateGuestInput {
			in := migrateIn("qemu", 100, "pve2", online)
			in.Approval = ""
			return in
		}(),
			kind: proxmoxsafe.ErrApprovalRequired, mention: `"APPROVE migrate pve1/qemu/100 target=pve2 online=1"`},
		{name: "phrase for another target node", in: func() proxmoxsafe.MigrateGuestInput {
			in := migrateIn("qemu", 100, "pve2", online)
			in.Approval = "APPROVE migrate pve1/qemu/100 target=pve3 online=1"
			return in
		}(), kind: proxmoxsafe.ErrApprovalRequired, mention: `"APPROVE migrate pve1/qemu/100 target=pve2 online=1"`},
		{name: "phrase for another guest", in: func() proxmoxsafe.MigrateGuestInput {
			in := migrateIn("qemu", 100, "pve2", online)
			in.Approval = migrateIn("qemu", 101, "pve2", online).Approval
			return in
		}(), kind: proxmoxsafe.ErrApprovalRequired, mention: `"APPROVE migrate pve1/qemu/100 target=pve2 online=1"`},
		{name: "phrase without local disks", in: func() proxmoxsafe.MigrateGuestInput {
			in := migrateIn("qemu", 101, "pve2", func(in *proxmoxsafe.MigrateGuestInput) { in.Online, in.WithLocalDisks = true, true })
			in.Approval = "APPROVE migrate pve1/qemu/101 target=pve2 online=1"
			return in
		}(), kind: proxmoxsafe.ErrApprovalRequired, mention: "with-local-disks=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newMigrateEnv(t, "", tt.mod)
			_, err := e.client.MigrateGuest(t.Context(), tt.in)
			assertRefusedNothingSent(t, e, err, tt.kind, tt.mention, tt.noReq)
		})
	}
}

// A migration that fails inside the task: the outcome says failed, with
// the guest still on the source, and the audit says failed.
func TestMigrateTaskFailed(t *testing.T) {
	t.Parallel()
	e := newMigrateEnv(t, "", nil)
	e.fake.FailNextTask("migration aborted")
	in := migrateIn("qemu", 100, "pve2", online)
	in.Wait = fastVerify()
	r, err := e.client.MigrateGuest(t.Context(), in)
	var te *proxmoxsafe.TaskError
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !errors.As(err, &te) || te.ExitStatus != "migration aborted" {
		t.Fatalf("err = %v, want a TaskError", err)
	}
	if r == nil || r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed || r.Outcome.Verified || r.Outcome.Observed != "on node pve1 (running)" {
		t.Fatalf("receipt = %+v outcome %+v", r, r.Outcome)
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Errorf("audit events = %v", got)
	}
}

// plan: true runs the precheck, sends nothing mutating, writes no audit
// record, and returns the request, the precheck's answer and the phrase.
// A container on PVE 8 has no precheck: the plan says so.
func TestMigratePlan(t *testing.T) {
	t.Parallel()
	e := newMigrateEnv(t, "", nil)
	in := proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, TargetNode: "pve2", Online: true, WithLocalDisks: true, Controls: proxmoxsafe.Controls{Plan: true, Wait: fastVerify()}}
	r, err := e.client.MigrateGuest(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Plan
	if p == nil || r.UPID != "" || r.Outcome != nil || p.Method != "POST" || p.Path != "/nodes/pve1/qemu/101/migrate" ||
		p.Params["target"] != "pve2" || p.Params["online"] != "1" || p.Params["with-local-disks"] != "1" ||
		p.Approval != "APPROVE migrate pve1/qemu/101 target=pve2 online=1 with-local-disks=1" || p.Class != proxmoxsafe.ClassMigrate ||
		!strings.Contains(p.Effect, "disks on node-local storage are copied") || r.TargetNode != "pve2" {
		t.Errorf("plan receipt = %+v, plan %+v", r, p)
	}
	pre := p.Precheck
	if pre == nil || !pre.Available || !pre.Running || len(pre.Blockers) != 0 || !slices.Equal(pre.AllowedNodes, []string{"pve2", "pve3", "pve4"}) ||
		len(pre.LocalDisks) != 1 || pre.LocalDisks[0].VolID != "local-lvm:vm-101-disk-0" || pre.LocalDisks[0].Size != 32<<30 {
		t.Errorf("precheck = %+v", pre)
	}
	if m := nonGET(e); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
	if ev := auditSummary(t, e); len(ev) != 0 {
		t.Errorf("audit = %v, want none for a plan", ev)
	}

	old := newMigrateEnv(t, "8.4.1", nil)
	r, err = old.client.MigrateGuest(t.Context(), proxmoxsafe.MigrateGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, TargetNode: "pve2", Restart: true, Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil || r.Plan == nil || r.Plan.Precheck == nil || r.Plan.Precheck.Available || !strings.Contains(r.Plan.Precheck.Note, "no migration precheck for containers") ||
		!strings.Contains(r.Plan.Effect, "no migration precheck for containers") {
		t.Fatalf("8.4 container plan = %+v, %v", r, err)
	}
	if m := nonGET(old); len(m) != 0 {
		t.Errorf("mutating requests: %v", m)
	}
}
