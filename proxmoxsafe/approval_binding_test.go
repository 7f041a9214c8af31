package proxmoxsafe_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func bindingBase() proxmoxsafe.ApprovalRequest {
	return proxmoxsafe.ApprovalRequest{
		Action:    "destroy",
		Target:    proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 103},
		Params:    []proxmoxsafe.ApprovalParam{{Name: "purge", Value: "0"}},
		Arguments: "aa",
		Phrase:    "APPROVE destroy pve1/qemu/103 purge=0",
		State:     proxmoxsafe.GuestState{Status: "stopped", Name: "db1"},
		Effect:    "delete VM 103; its disks are deleted: scsi0 local-lvm:vm-103-disk-0 (100G)",
		Risk:      "only a backup can bring it back.",
		Cluster:   proxmoxsafe.Cluster{URL: "https://pve-lab:8006", User: "root@pam!mcp"},
		Plan: &proxmoxsafe.Plan{Method: "DELETE", Path: "/nodes/pve1/qemu/103", Params: map[string]string{"purge": "0"},
			Approval: "APPROVE destroy pve1/qemu/103 purge=0", ApprovalLevels: []proxmoxsafe.ApprovalLevel{"grant"}},
	}
}

// TestApprovalBindingCoversWhatIsShown: every part a person approving is
// shown changes the binding (and ShownDifference names it); what is not
// shown as a fact of the request (the phrase, the text given, the plan's
// levels) does not.
func TestApprovalBindingCoversWhatIsShown(t *testing.T) {
	t.Parallel()
	base := bindingBase()
	for _, tc := range []struct {
		name   string
		change func(r *proxmoxsafe.ApprovalRequest)
		names  string // what ShownDifference must say; "" = same binding
	}{
		{"cluster URL", func(r *proxmoxsafe.ApprovalRequest) { r.Cluster.URL = "https://pve-prod:8006" }, "the cluster"},
		{"cluster user", func(r *proxmoxsafe.ApprovalRequest) { r.Cluster.User = "ops@pve!mcp" }, "the cluster"},
		{"action", func(r *proxmoxsafe.ApprovalRequest) { r.Action = "stop" }, "the action"},
		{"target", func(r *proxmoxsafe.ApprovalRequest) { r.Target.VMID = 104 }, "the target"},
		{"parameters", func(r *proxmoxsafe.ApprovalRequest) { r.Params = nil }, "the parameters"},
		{"arguments", func(r *proxmoxsafe.ApprovalRequest) { r.Arguments = "bb" }, "the arguments"},
		{"state", func(r *proxmoxsafe.ApprovalRequest) { r.State.Lock = "backup" }, "the guest's state"},
		{"name", func(r *proxmoxsafe.ApprovalRequest) { r.State.Name = "db2" }, "name db2"},
		{"effect", func(r *proxmoxsafe.ApprovalRequest) { r.Effect += ", scsi1 local-lvm:vm-103-disk-1 (2T)" }, "the effect"},
		{"risk", func(r *proxmoxsafe.ApprovalRequest) { r.Risk = "none" }, "the risk"},
		{"request", func(r *proxmoxsafe.ApprovalRequest) { r.Plan.Params["purge"] = "1" }, "the request"},
		{"no request", func(r *proxmoxsafe.ApprovalRequest) { r.Plan = nil }, "the request"},
		{"phrase", func(r *proxmoxsafe.ApprovalRequest) { r.Phrase = "other" }, ""},
		{"given", func(r *proxmoxsafe.ApprovalRequest) { r.Given = "APPROVE destroy pve1/qemu/103 purge=0" }, ""},
		{"uptime", func(r *proxmoxsafe.ApprovalRequest) { r.State.Uptime = 5 }, ""},
		{"plan levels", func(r *proxmoxsafe.ApprovalRequest) { r.Plan.ApprovalLevels = nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := bindingBase()
			plan := *now.Plan
			plan.Params = map[string]string{"purge": "0"}
			now.Plan = &plan
			tc.change(&now)
			diff := proxmoxsafe.ShownDifference(base, now)
			if same := base.Binding() == now.Binding(); same != (tc.names == "") {
				t.Fatalf("binding equal = %v, want %v", same, tc.names == "")
			}
			if !strings.Contains(diff, tc.names) || (tc.names == "") != (diff == "") {
				t.Errorf("ShownDifference = %q, want it to name %q", diff, tc.names)
			}
		})
	}
	if b := base.Binding(); len(b) != 64 || strings.Trim(b, "0123456789abcdef") != "" {
		t.Errorf("binding %q is not 64 lowercase hex digits", b)
	}
	if got, want := base.Request(), "DELETE /nodes/pve1/qemu/103 purge=0"; got != want {
		t.Errorf("Request() = %q, want %q", got, want)
	}
	if got, want := base.Cluster.String(), "https://pve-lab:8006 as root@pam!mcp"; got != want {
		t.Errorf("Cluster.String() = %q, want %q", got, want)
	}
}

// TestApproversGetTheClusterAndRisk: the pipeline hands every approver
// the cluster and the action's risk line, so approvers can show and bind
// them; every audit record names the cluster, refusals of invalid input
// included.
func TestApproversGetTheClusterAndRisk(t *testing.T) {
	t.Parallel()
	var got proxmoxsafe.ApprovalRequest
	e := newEnv(t, func(c *proxmoxsafe.Config) {
		useApprover(c, approverFunc(func(_ context.Context, req proxmoxsafe.ApprovalRequest) error {
			got = req
			return nil
		}))
	})
	want := proxmoxsafe.Cluster{URL: strings.ToLower(strings.TrimSuffix(e.fake.URL, "/")), User: "automation@pve!mcp"}
	if c := e.client.Cluster(); c != want {
		t.Fatalf("Cluster() = %+v, want %+v", c, want)
	}
	if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionShutdown)); err != nil {
		t.Fatal(err)
	}
	if got.Cluster != want || got.Risk != proxmoxsafe.ActionRisk("shutdown") || got.Risk == "" {
		t.Errorf("approver got cluster %+v, risk %q", got.Cluster, got.Risk)
	}
	_, _ = e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 106, proxmoxsafe.ActionShutdown)) // protected
	_, _ = e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 1, proxmoxsafe.ActionShutdown))   // invalid
	recs := auditEvents(t, e)
	if len(recs) < 4 {
		t.Fatalf("audit records: %+v", recs)
	}
	for _, r := range recs {
		if r.Cluster != want.String() {
			t.Errorf("%s record names cluster %q, want %q", r.Event, r.Cluster, want.String())
		}
	}
}

// TestClusterURL: Config.ClusterURL names the cluster instead of URL (the
// binary's demo, whose fake listens on a new port every run), checked as
// URL is; without it the cluster is URL's scheme and host, lower case.
func TestClusterURL(t *testing.T) {
	t.Parallel()
	base := proxmoxsafe.Config{URL: "https://PVE-Lab.example:8006/api2/json", TokenID: "root@pam!mcp", TokenSecret: "00000000-0000-4000-8000-000000000000", InsecureSkipVerify: true}
	for _, tc := range []struct {
		cluster, want, err string
	}{
		{"", "https://pve-lab.example:8006 as root@pam!mcp", ""},
		{"https://pve-demo.invalid:8006", "https://pve-demo.invalid:8006 as root@pam!mcp", ""},
		{"https://user:pw@pve:8006", "", "ClusterURL must not contain credentials"},
		{"ftp://pve", "", "ClusterURL scheme must be https"},
	} {
		cfg := base
		cfg.ClusterURL = tc.cluster
		c, err := proxmoxsafe.New(cfg)
		if tc.err != "" {
			var ce *proxmoxsafe.ConfigError
			if !errors.As(err, &ce) || ce.Field != "ClusterURL" || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ClusterURL %q: %v, want a ConfigError saying %q", tc.cluster, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ClusterURL %q: %v", tc.cluster, err)
		}
		if got := c.Cluster().String(); got != tc.want {
			t.Errorf("ClusterURL %q: Cluster() = %q, want %q", tc.cluster, got, tc.want)
		}
	}
}
