package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestClusterNameInPhrase: with Config.ClusterName the phrase ends in
// " cluster=<name>", so the phrase one cluster's refusal names is refused
// by another cluster with the same guest, with nothing sent there; its own
// phrase passes, and the audit record names the cluster.
func TestClusterNameInPhrase(t *testing.T) {
	t.Parallel()
	lab := newEnv(t, func(c *proxmoxsafe.Config) { c.ClusterName = "lab" })
	prod := newEnv(t, func(c *proxmoxsafe.Config) { c.ClusterName = "prod" })
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 100}, Action: proxmoxsafe.ActionShutdown}
	_, err := lab.client.GuestPower(t.Context(), in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) || ae.Required != "APPROVE shutdown pve1/qemu/100 cluster=lab" {
		t.Fatalf("lab without a phrase: %v, want the phrase naming the cluster", err)
	}
	in.Approval = ae.Required
	_, err = prod.client.GuestPower(t.Context(), in)
	if !errors.As(err, &ae) || ae.Required != "APPROVE shutdown pve1/qemu/100 cluster=prod" || !ae.Given {
		t.Fatalf("lab's phrase on prod: %v, want a refusal naming prod's phrase", err)
	}
	if m := prod.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("prod: mutating requests after the refusal: %v", reqLines(m))
	}
	if _, err := lab.client.GuestPower(t.Context(), in); err != nil {
		t.Fatalf("lab with its phrase: %v", err)
	}
	if got := lab.client.Cluster(); got.Name != "lab" || !strings.HasPrefix(got.String(), "lab: http") {
		t.Errorf("Cluster() = %+v (%q)", got, got.String())
	}
	if !strings.Contains(lab.audit.String(), `"cluster":"lab: http`) {
		t.Errorf("lab's audit log does not name the cluster:\n%s", lab.audit.String())
	}
	plan, err := prod.client.GuestPower(t.Context(), proxmoxsafe.GuestPowerInput{GuestRef: in.GuestRef, Action: in.Action,
		Controls: proxmoxsafe.Controls{Plan: true}})
	if err != nil || plan.Plan == nil || plan.Plan.Approval != "APPROVE shutdown pve1/qemu/100 cluster=prod" {
		t.Fatalf("prod's plan: %v %+v", err, plan)
	}
}

// TestClusterNameChecked: a name that is not a lower-case DNS label is a
// configuration error naming the field.
func TestClusterNameChecked(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Lab", "-lab", "lab-", "la b", "lab*", "*", strings.Repeat("a", 33), "lab.example"} {
		cfg := proxmoxsafe.Config{URL: "https://pve:8006", TokenID: "root@pam!mcp", TokenSecret: "00000000-0000-0000-0000-000000000000", ClusterName: name}
		_, err := proxmoxsafe.New(cfg)
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != "ClusterName" {
			t.Errorf("ClusterName %q: err = %v, want a ConfigError for ClusterName", name, err)
		}
	}
	for _, name := range []string{"lab", "a", "prod-eu-1", "0", strings.Repeat("a", 32)} {
		if !proxmoxsafe.ValidClusterName(name) {
			t.Errorf("ValidClusterName(%q) = false", name)
		}
	}
}
