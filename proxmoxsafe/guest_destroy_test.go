package proxmoxsafe_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// destroyTestCluster has one guest per destroy situation, on pve1 unless
// said otherwise; pve3 is online but not on the allowlist.
func destroyTestCluster() *proxmoxtest.Cluster {
	return &proxmoxtest.Cluster{
		Name: "lab",
		Nodes: []*proxmoxtest.Node{
			{Name: "pve1", Online: true, IP: "10.0.0.1"}, {Name: "pve2", Online: true, IP: "10.0.0.2"}, {Name: "pve3", Online: true, IP: "10.0.0.3"},
		},
		Guests: []*proxmoxtest.Guest{
			{VMID: 120, Node: "pve1", Type: "qemu", Name: "old1", Status: "stopped", MaxDisk: 32 << 30,
				Snapshots: []*proxmoxtest.Snapshot{{Name: "s1", SnapTime: 1700000000}, {Name: "s2", Parent: "s1", SnapTime: 1700000100}},
				Config: map[string]string{
					"scsi1":    "local-lvm:vm-999-disk-0,size=4G",
					"unused0":  "local-lvm:vm-120-disk-1",
					"efidisk0": "local-lvm:vm-120-disk-2,efitype=4m,size=4M",
					"ide2":     "local:iso/debian.iso,media=cdrom,size=600M",
					"ide0":     "local-lvm:vm-120-cloudinit,media=cdrom",
				}},
			{VMID: 121, Node: "pve1", Type: "qemu", Name: "busy", Status: "running", Uptime: 3600},
			{VMID: 122, Node: "pve1", Type: "qemu", Name: "keepme", Status: "stopped", Config: map[string]string{"protection": "1"}},
			{VMID: 123, Node: "pve1", Type: "qemu", Name: "ha-off", Status: "stopped", HAManaged: true, HAState: "stopped"},
			{VMID: 124, Node: "pve1", Type: "qemu", Name: "ha-starting", Status: "stopped", HAManaged: true, HAState: "started"},
			{VMID: 125, Node: "pve1", Type: "qemu", Name: "backingup", Status: "stopped", Lock: "backup"},
			{VMID: 126, Node: "pve1", Type: "qemu", Name: "sleeper", Status: "stopped", Lock: "suspended"},
			{VMID: 127, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true},
			{VMID: 128, Node: "pve2", Type: "qemu", Name: "child", Status: "stopped",
				Config: map[string]string{"scsi0": "local-lvm:base-127-disk-0/vm-128-disk-0,size=8G"}},
			{VMID: 129, Node: "pve1", Type: "qemu", Name: "tmpl2", Status: "stopped", Template: true},
			{VMID: 130, Node: "pve3", Type: "qemu", Name: "farchild", Status: "stopped",
				Config: map[string]string{"scsi0": "local-lvm:base-129-disk-0/vm-130-disk-0,size=8G"}},
			{VMID: 131, Node: "pve1", Type: "qemu", Name: "paused", Status: "running", Paused: true},
			{VMID: 132, Node: "pve1", Type: "qemu", Name: "db", Status: "stopped"},
			{VMID: 133, Node: "pve1", Type: "qemu", Name: "vip", Status: "stopped"},
			{VMID: 210, Node: "pve1", Type: "lxc", Name: "ct-old", Status: "stopped", MaxDisk: 8 << 30,
				Config: map[string]string{"mp0": "local-lvm:vm-210-disk-1,mp=/srv,size=2G", "mp1": "/mnt/host,mp=/host"}},
			{VMID: 211, Node: "pve1", Type: "lxc", Name: "ct-on", Status: "running"},
		},
		Tokens: map[string]*proxmoxtest.Token{
			"automation@pve!mcp": {Secret: canary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
		},
	}
}

// phraseLevel is the policy entry that lets the phrase approve destroys.
var phraseLevel = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}

// newDestroyEnv enables only the destroy class, on pve1 and pve2, with
// the phrase level (mod may change that), VMID 133 and the name "db"
// protected by the operator.
func newDestroyEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnvWith(t, destroyTestCluster(), func(c *proxmoxsafe.Config) {
		c.Policy = proxmoxsafe.Policy{
			AllowedNodes:    []string{"pve1", "pve2"},
			Classes:         []proxmoxsafe.Class{proxmoxsafe.ClassDestroy},
			ProtectedGuests: []int{133},
			ProtectedNames:  []string{"db"},
			Approvals:       phraseLevel,
		}
		if mod != nil {
			mod(c)
		}
	})
}

func destroyIn(typ proxmoxsafe.GuestType, vmid int, purge, unref bool) proxmoxsafe.DestroyGuestInput {
	in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid}, Purge: purge, DestroyUnreferencedDisks: unref}
	in.Approval = in.ApprovalPhrase()
	return in
}

func TestDestroyApprovalPhrase(t *testing.T) {
	t.Parallel()
	in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Purge: true, DestroyUnreferencedDisks: true}
	if got, want := in.ApprovalPhrase(), "APPROVE destroy pve1/qemu/101 purge=1 destroy-unreferenced-disks=1"; got != want {
		t.Errorf("phrase = %q, want %q", got, want)
	}
	in.Purge, in.DestroyUnreferencedDisks = false, false
	if got, want := in.ApprovalPhrase(), "APPROVE destroy pve1/qemu/101 purge=0 destroy-unreferenced-disks=0"; got != want {
		t.Errorf("phrase = %q, want %q", got, want)
	}
}

func TestDestroyHappyPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       proxmoxsafe.DestroyGuestInput
		path     string
		query    string
		taskType string
	}{
		{"stopped VM", destroyIn("qemu", 120, false, true), "/nodes/pve1/qemu/120", "destroy-unreferenced-disks=1&purge=0", "qmdestroy"},
		{"HA-managed VM with purge", destroyIn("qemu", 123, true, false), "/nodes/pve1/qemu/123", "destroy-unreferenced-disks=0&purge=1", "qmdestroy"},
		{"hibernated VM", destroyIn("qemu", 126, false, false), "/nodes/pve1/qemu/126", "destroy-unreferenced-disks=0&purge=0", "qmdestroy"},
		{"container", destroyIn("lxc", 210, true, true), "/nodes/pve1/lxc/210", "destroy-unreferenced-disks=1&purge=1", "vzdestroy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newDestroyEnv(t, nil)
			in := tt.in
			in.Wait = fastVerify()
			r, err := e.client.DestroyGuest(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			muts := e.fake.MutatingRequests()
			if len(muts) != 1 || muts[0].Method != "DELETE" || muts[0].Path != tt.path || muts[0].Query.Encode() != tt.query || len(muts[0].Form) != 0 {
				t.Fatalf("mutating requests = %+v, want one DELETE %s?%s", muts, tt.path, tt.query)
			}
			if r.Task.Type != tt.taskType {
				t.Errorf("task type = %q, want %q", r.Task.Type, tt.taskType)
			}
			if o := r.Outcome; o == nil || o.Status != proxmoxsafe.OutcomeCompleted || !o.Verified || o.Observed != "gone from /cluster/resources" {
				t.Errorf("outcome = %+v, want completed, verified gone", o)
			}
			if _, ok := e.fake.Guest(in.VMID); ok {
				t.Error("the guest is still in the fake cluster")
			}
			recs := auditEvents(t, e)
			if got := eventNames(recs); !slices.Equal(got, []string{"approved", "submitted", "completed"}) {
				t.Errorf("audit events = %v", got)
			}
			wantParams := []string{"purge=" + bit(in.Purge), "destroy-unreferenced-disks=" + bit(in.DestroyUnreferencedDisks)}
			for _, rec := range recs[:2] {
				if rec.Op != proxmoxsafe.OpDestroyGuest || rec.Action != "destroy" || rec.VMID != in.VMID || !slices.Equal(rec.Params, wantParams) || rec.Approver != "phrase" {
					t.Errorf("audit record = %+v, want DestroyGuest destroy %d %v by phrase", rec, in.VMID, wantParams)
				}
			}
		})
	}
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Every precondition and policy refusal: the reason, no mutating request,
// one refused audit record.
func TestDestroyRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      proxmoxsafe.DestroyGuestInput
		mod     func(*proxmoxsafe.Config)
		kind    error
		mention string
		noReq   bool
	}{
		{name: "running VM", in: destroyIn("qemu", 121, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "VM 121 is running - destroy failed"},
		{name: "paused VM", in: destroyIn("qemu", 131, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "running (paused)"},
		{name: "running container", in: destroyIn("lxc", 211, true, false), kind: proxmoxsafe.ErrPrecondition, mention: "unable to destroy CT 211 - container is running"},
		{name: "Proxmox protection flag", in: destroyIn("qemu", 122, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "can't remove VM 122 - protection mode enabled"},
		{name: "HA-managed without purge", in: destroyIn("qemu", 123, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "used in HA resources and purge parameter not set"},
		{name: "HA asked to start it", in: destroyIn("qemu", 124, true, false), kind: proxmoxsafe.ErrPrecondition, mention: "HA state started"},
		{name: "locked", in: destroyIn("qemu", 125, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "locked (backup)"},
		{name: "template with a linked clone", in: destroyIn("qemu", 127, false, false), kind: proxmoxsafe.ErrPrecondition, mention: "VM 128 (child) on pve2 uses local-lvm:base-127-disk-0/vm-128-disk-0"},
		{name: "missing guest", in: destroyIn("qemu", 999, false, false), kind: proxmoxsafe.ErrNotFound, mention: "999.conf' does not exist"},
		{name: "protected VMID", in: destroyIn("qemu", 133, false, false), kind: proxmoxsafe.ErrNotAllowed, mention: "protected by the operator", noReq: true},
		{name: "protected name", in: destroyIn("qemu", 132, false, false), kind: proxmoxsafe.ErrNotAllowed, mention: "protected by the operator"},
		{name: "class not enabled", in: destroyIn("qemu", 120, false, false), kind: proxmoxsafe.ErrNotAllowed, mention: `"destroy" mutation class is not enabled`, noReq: true,
			mod: func(c *proxmoxsafe.Config) {
				c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot, proxmoxsafe.ClassSnapshotAdmin, proxmoxsafe.ClassPowerExtra}
			}},
		{name: "read-only", in: destroyIn("qemu", 120, false, false), kind: proxmoxsafe.ErrNotAllowed, mention: "read-only", noReq: true,
			mod: func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }},
		{name: "node not allowed", in: func() proxmoxsafe.DestroyGuestInput {
			in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve3", Type: "qemu", VMID: 130}}
			in.Approval = in.ApprovalPhrase()
			return in
		}(), kind: proxmoxsafe.ErrNotAllowed, mention: "allowlist", noReq: true},
		{name: "invalid VMID", in: proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 99}}, kind: proxmoxsafe.ErrInvalidInput, mention: "vmid", noReq: true},
		{name: "invalid type", in: proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "openvz", VMID: 120}}, kind: proxmoxsafe.ErrInvalidInput, mention: "type", noReq: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newDestroyEnv(t, tt.mod)
			_, err := e.client.DestroyGuest(t.Context(), tt.in)
			assertRefusedNothingSent(t, e, err, tt.kind, tt.mention, tt.noReq)
			if tt.kind == proxmoxsafe.ErrPrecondition && !slices.Contains(reqLines(e.requests()), "GET /nodes/pve1/"+string(tt.in.Type)+"/"+strconv.Itoa(tt.in.VMID)+"/status/current") {
				t.Errorf("requests = %v, want a fresh status read", reqLines(e.requests()))
			}
		})
	}
}

// The approval binds target and both choices; another class's phrase,
// another guest's, or the same guest with other choices does nothing.
func TestDestroyApprovalBound(t *testing.T) {
	t.Parallel()
	other := destroyIn("qemu", 126, false, false).Approval
	tests := []struct{ name, given string }{
		{"none given", ""},
		{"another guest", other},
		{"purge differs", "APPROVE destroy pve1/qemu/120 purge=1 destroy-unreferenced-disks=0"},
		{"unreferenced differs", "APPROVE destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=1"},
		{"choices left out", "APPROVE destroy pve1/qemu/120"},
		{"another class", "APPROVE stop pve1/qemu/120"},
		{"lower case", "approve destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newDestroyEnv(t, nil)
			in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Controls: proxmoxsafe.Controls{Approval: tt.given}}
			_, err := e.client.DestroyGuest(t.Context(), in)
			var ae *proxmoxsafe.ApprovalError
			if !errors.As(err, &ae) || ae.Required != "APPROVE destroy pve1/qemu/120 purge=0 destroy-unreferenced-disks=0" {
				t.Fatalf("err = %v, want an ApprovalError naming the exact phrase", err)
			}
			for _, want := range []string{"scsi0 local-lvm:vm-120-disk-0 (32G)", "its 2 snapshots are deleted", "unused0 local-lvm:vm-120-disk-1", "efidisk0 local-lvm:vm-120-disk-2 (4M)", "ide0 local-lvm:vm-120-cloudinit", "scsi1 local-lvm:vm-999-disk-0 (4G), owned by guest 999"} {
				if !strings.Contains(ae.Effect, want) {
					t.Errorf("effect %q lacks %q", ae.Effect, want)
				}
			}
			if strings.Contains(ae.Effect, "debian.iso") {
				t.Errorf("effect %q lists the CD-ROM image as lost", ae.Effect)
			}
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrApprovalRequired, "no action was taken", false)
		})
	}
}

// unavailableApprover stands in for the elicitation approver of a caller
// that is not an MCP client: it never serves.
type unavailableApprover string

func (u unavailableApprover) Name() string { return string(u) }

func (u unavailableApprover) Approve(context.Context, proxmoxsafe.ApprovalRequest) error {
	return fmt.Errorf("%w: not an MCP tool call", proxmoxsafe.ErrApproverUnavailable)
}

// humanApprovers are the approvers the destroy class's default levels
// name: an elicitation that cannot serve here, and a grant store.
func humanApprovers(t *testing.T) (*grant.Store, []proxmoxsafe.Approver) {
	t.Helper()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return store, []proxmoxsafe.Approver{unavailableApprover(proxmoxsafe.LevelElicit), store}
}

// With no Policy.Approvals entry, destroy needs a person: the exact
// phrase is refused, and the refusal says so and what the operator must
// do (approve the grant code out of band). Without approvers for those
// levels New refuses the configuration.
func TestDestroyDefaultLevelRefusesPhrase(t *testing.T) {
	t.Parallel()
	if got := proxmoxsafe.DefaultApprovals(proxmoxsafe.ClassDestroy); !slices.Equal(got, []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit, proxmoxsafe.LevelGrant}) {
		t.Fatalf("DefaultApprovals(destroy) = %v, want [elicit grant]", got)
	}
	_, approvers := humanApprovers(t)
	e := newDestroyEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Approvals, c.Approvers = nil, approvers })
	in := destroyIn("qemu", 120, false, false)
	_, err := e.client.DestroyGuest(t.Context(), in)
	assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrApprovalRequired, "no action was taken", false)
	var ge *grant.RequiredError
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want a grant to approve", err)
	}
	for _, want := range []string{
		`the approval phrase given does not approve the "destroy" class, whose levels are elicit, grant`,
		"an operator must approve grant " + ge.Grant.Code + " out of band",
		"proxmox-safe-mcp approve " + ge.Grant.Code,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	// The plan shows no phrase: the levels in force do not take one.
	if ge.Plan == nil || ge.Plan.Approval != "" || ge.Plan.Path != "/nodes/pve1/qemu/120" {
		t.Errorf("refusal plan = %+v, want the plan without a phrase", ge.Plan)
	}

	cfg := proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "auto@pve!mcp", TokenSecret: "s", Audit: auditlog.New(&syncBuffer{}, nil),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassDestroy}}}
	if _, err := proxmoxsafe.New(cfg); err == nil || !strings.Contains(err.Error(), `class "destroy"`) {
		t.Errorf("New without approvers for destroy's default levels = %v, want a config error", err)
	}
}

// When no approval level can serve (no elicitation, and the operator did
// not name the class), the refusal says what the operator can do.
func TestDestroyNoLevelServesHint(t *testing.T) {
	t.Parallel()
	e := newDestroyEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Approvals = nil
		c.Approvers = []proxmoxsafe.Approver{unavailableApprover(proxmoxsafe.LevelElicit), unavailableApprover(proxmoxsafe.LevelGrant)}
	})
	_, err := e.client.DestroyGuest(t.Context(), destroyIn("qemu", 120, false, false))
	assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrApprovalRequired, "no action was taken", false)
	for _, want := range []string{"the approval phrase given does not approve", "only a person approves it", "proxmox-safe-mcp approve CODE", "destroy=phrase"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
}

// The default levels with a grant store: the operator's grant approves
// exactly the call it was asked for, once.
func TestDestroyDefaultLevelGrant(t *testing.T) {
	t.Parallel()
	store, approvers := humanApprovers(t)
	e := newDestroyEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Approvals, c.Approvers = nil, approvers })
	in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 120}, Purge: true}
	_, err := e.client.DestroyGuest(t.Context(), in)
	var ge *grant.RequiredError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "proxmox-safe-mcp approve "+ge.Grant.Code) {
		t.Fatalf("err = %v, want a grant code to approve", err)
	}
	if !slices.Equal(ge.Grant.Params, []string{"purge=1", "destroy-unreferenced-disks=0"}) || !strings.Contains(ge.Grant.Effect, "purge=1") {
		t.Errorf("grant = %+v, want both choices bound and shown", ge.Grant)
	}
	if _, err := store.Decide(ge.Grant.Code, true, "alice"); err != nil {
		t.Fatal(err)
	}
	// The grant does not approve other choices for the same guest.
	other := in
	other.Purge = false
	if _, err := e.client.DestroyGuest(t.Context(), other); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Fatalf("other choices: err = %v, want approval required", err)
	}
	if got := nonGET(e); len(got) != 0 {
		t.Fatalf("non-GET requests = %v before the approved call", got)
	}
	r, err := e.client.DestroyGuest(t.Context(), in)
	if err != nil || r.UPID == "" {
		t.Fatalf("approved retry: %v, %v", r, err)
	}
	if got := nonGET(e); len(got) != 1 {
		t.Errorf("non-GET requests = %v, want the one DELETE", got)
	}
	recs := auditEvents(t, e)
	last := recs[len(recs)-1]
	if last.Event != "submitted" || last.Approver != "grant" || last.Grant != ge.Grant.Code || last.Operator != "alice" {
		t.Errorf("audit record = %+v, want submitted, approved by alice's grant", last)
	}
}

func TestDestroyPlan(t *testing.T) {
	t.Parallel()
	_, approvers := humanApprovers(t)
	e := newDestroyEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Approvals, c.Approvers = nil, approvers })
	in := proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 210}, Purge: true, Controls: proxmoxsafe.Controls{Plan: true}}
	r, err := e.client.DestroyGuest(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Plan
	if p == nil || r.UPID != "" || p.Method != "DELETE" || p.Path != "/nodes/pve1/lxc/210" || p.Class != proxmoxsafe.ClassDestroy ||
		p.Params["purge"] != "1" || p.Params["destroy-unreferenced-disks"] != "0" || len(p.Params) != 2 ||
		p.Approval != "" || // elicit and grant take no phrase, so none is shown
		!slices.Equal(p.ApprovalLevels, []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit, proxmoxsafe.LevelGrant}) {
		t.Fatalf("plan = %+v, receipt %+v", p, r)
	}
	for _, want := range []string{"rootfs local-lvm:vm-210-disk-0 (8G)", "mp0 local-lvm:vm-210-disk-1 (2G)", "it has no snapshots", "purge=1", "are kept"} {
		if !strings.Contains(p.Effect, want) {
			t.Errorf("effect %q lacks %q", p.Effect, want)
		}
	}
	if strings.Contains(p.Effect, "/mnt/host") {
		t.Errorf("effect %q lists a bind mount as lost", p.Effect)
	}
	if got := nonGET(e); len(got) != 0 {
		t.Errorf("non-GET requests = %v, want none", got)
	}
	if s := strings.TrimSpace(e.audit.String()); strings.Contains(s, `"event":"approved"`) || strings.Contains(s, `"event":"submitted"`) {
		t.Errorf("a plan wrote approval records: %s", s)
	}
}

// A task that fails is reported as failed, with Proxmox's reason, and the
// guest stays: a template whose linked clone is on a node outside the
// allowlist (the library could not check it and says so in the effect).
func TestDestroyTaskFails(t *testing.T) {
	t.Parallel()
	e := newDestroyEnv(t, nil)
	plan, err := e.client.DestroyGuest(t.Context(), proxmoxsafe.DestroyGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 129}, Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Plan.Effect, "1 guests elsewhere were not checked") {
		t.Errorf("effect %q does not say a possible clone was not checked", plan.Plan.Effect)
	}
	in := destroyIn("qemu", 129, false, false)
	in.Wait = fastVerify()
	r, err := e.client.DestroyGuest(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || r == nil || r.Outcome == nil {
		t.Fatalf("err = %v, receipt %+v; want a failed task", err, r)
	}
	o := r.Outcome
	if o.Status != proxmoxsafe.OutcomeFailed || o.Verified || o.ExitStatus != "base volume 'local-lvm:base-129-disk-0' is still in use by linked cloned" ||
		!strings.HasPrefix(o.Observed, "still in /cluster/resources") {
		t.Errorf("outcome = %+v", o)
	}
	if _, ok := e.fake.Guest(129); !ok {
		t.Error("the template is gone after a failed destroy")
	}
	if got := eventNames(auditEvents(t, e)); !slices.Equal(got, []string{"approved", "submitted", "failed"}) {
		t.Errorf("audit events = %v", got)
	}
}

// Verify of a destroy waits for the guest to leave /cluster/resources.
func TestDestroyVerifyLater(t *testing.T) {
	t.Parallel()
	e := newDestroyEnv(t, nil)
	r, err := e.client.DestroyGuest(t.Context(), destroyIn("qemu", 120, false, false))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.client.Verify(context.WithoutCancel(t.Context()), r, fastVerify())
	if err != nil || out.Status != proxmoxsafe.OutcomeCompleted || out.Observed != "gone from /cluster/resources" {
		t.Fatalf("Verify = %+v, %v", out, err)
	}
}
