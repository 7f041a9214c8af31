package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
)

func TestApprovalLevels(t *testing.T) {
	t.Parallel()
	levels := func(c *proxmoxsafe.Config, cl proxmoxsafe.Class, l ...proxmoxsafe.ApprovalLevel) {
		if c.Policy.Approvals == nil {
			c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
		}
		c.Policy.Approvals[cl] = l
	}
	t.Run("none approves without a phrase, and is audited", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) { levels(c, proxmoxsafe.ClassPower, proxmoxsafe.LevelNone) })
		in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "qemu", VMID: 101}, Action: proxmoxsafe.ActionStart}
		if _, err := e.client.GuestPower(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(e.audit.String(), `"approver":"none"`) {
			t.Errorf("audit log does not name approver none:\n%s", e.audit.String())
		}
		if !strings.Contains(e.logs.String(), "approval level none") {
			t.Errorf("New did not warn about level none:\n%s", e.logs.String())
		}
		// The other class keeps the phrase.
		snap := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: "lxc", VMID: 200}, Name: "s1"}
		if _, err := e.client.SnapshotGuest(t.Context(), snap); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
			t.Errorf("snapshot without phrase: err = %v", err)
		}
	})
	t.Run("an unavailable level falls back to the next", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) {
			c.Approvers = []proxmoxsafe.Approver{unavailable{"elicit"}}
			levels(c, proxmoxsafe.ClassPower, proxmoxsafe.LevelElicit, proxmoxsafe.LevelPhrase)
		})
		if _, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(e.audit.String(), `"approver":"phrase"`) {
			t.Errorf("audit log:\n%s", e.audit.String())
		}
	})
	t.Run("no level available refuses", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c *proxmoxsafe.Config) {
			c.Approvers = []proxmoxsafe.Approver{unavailable{"elicit"}}
			levels(c, proxmoxsafe.ClassPower, proxmoxsafe.LevelElicit)
		})
		// The right phrase does not help: the operator did not allow it.
		_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 101, proxmoxsafe.ActionStart))
		if !errors.Is(err, proxmoxsafe.ErrApprovalRequired) || !strings.Contains(err.Error(), "elicit") {
			t.Errorf("err = %v", err)
		}
		if m := e.fake.MutatingRequests(); len(m) != 0 {
			t.Errorf("mutating requests: %v", reqLines(m))
		}
	})
	t.Run("New refuses levels without approvers and reserved names", func(t *testing.T) {
		t.Parallel()
		for name, mod := range map[string]func(*proxmoxsafe.Config){
			"grant without approver": func(c *proxmoxsafe.Config) { levels(c, proxmoxsafe.ClassSnapshot, proxmoxsafe.LevelGrant) },
			"approver named phrase":  func(c *proxmoxsafe.Config) { c.Approvers = []proxmoxsafe.Approver{unavailable{"phrase"}} },
			"approver named none":    func(c *proxmoxsafe.Config) { c.Approvers = []proxmoxsafe.Approver{unavailable{"none"}} },
			"two of a name": func(c *proxmoxsafe.Config) {
				c.Approvers = []proxmoxsafe.Approver{unavailable{"x"}, unavailable{"x"}}
			},
			"empty level list": func(c *proxmoxsafe.Config) { levels(c, proxmoxsafe.ClassPower) },
			"unknown class":    func(c *proxmoxsafe.Config) { levels(c, "nuke", proxmoxsafe.LevelPhrase) },
		} {
			cfg := baseConfig()
			cfg.Audit = auditlog.New(&syncBuffer{}, nil)
			mod(&cfg)
			var ce *proxmoxsafe.ConfigError
			if _, err := proxmoxsafe.New(cfg); !errors.As(err, &ce) {
				t.Errorf("%s: New = %v, want a ConfigError", name, err)
			}
		}
	})
}
