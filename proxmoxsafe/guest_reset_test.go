package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func resetIn(vmid int) proxmoxsafe.ResetGuestInput {
	return proxmoxsafe.ResetGuestInput{
		Node:     "pve1",
		Type:     "qemu",
		VMID:     vmid,
		Controls: proxmoxsafe.Controls{Approval: proxmoxsafe.ApprovalPhrase("reset", guestTarget("pve1", "qemu", vmid))},
	}
}

func TestResetGuest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("agent not running", func(t *testing.T) {
		t.Parallel()
		e := newResponderEnv(t, nil)
		r, err := e.client.ResetGuest(ctx, resetIn(105))
		if err != nil {
			t.Fatal(err)
		}
		if r.Task.Type != "qmreset" || r.Action != "reset" {
			t.Errorf("receipt = %+v", r)
		}
		want := []string{"POST /nodes/pve1/qemu/105/agent/ping", "POST /nodes/pve1/qemu/105/status/reset"}
		if got := nonGET(e); !slices.Equal(got, want) {
			t.Errorf("non-GET requests = %v, want %v", got, want)
		}
		if ev := auditSummary(t, e); !slices.Equal(ev, []string{"approved ResetGuest reset 105", "submitted ResetGuest reset 105"}) {
			t.Errorf("audit = %v", ev)
		}
	})
	t.Run("agent hangs past the timeout", func(t *testing.T) {
		t.Parallel()
		fake := proxmoxtest.NewUnstartedServer(responderCluster())
		fake.AgentTimeout = time.Hour // Proxmox would wait; we do not
		fake.StartTLS()
		e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
			c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
		})
		in := resetIn(105)
		in.AgentTimeout = 50 * time.Millisecond
		if _, err := e.client.ResetGuest(ctx, in); err != nil {
			t.Fatal(err)
		}
		if got := nonGET(e); len(got) != 2 || got[1] != "POST /nodes/pve1/qemu/105/status/reset" {
			t.Errorf("non-GET requests = %v", got)
		}
	})
	t.Run("no agent, operator allows it", func(t *testing.T) {
		t.Parallel()
		e := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ResetWithoutAgent = true })
		if _, err := e.client.ResetGuest(ctx, resetIn(106)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("token cannot ping", func(t *testing.T) {
		t.Parallel()
		c := responderCluster()
		c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/": {"VM.Audit", "VM.PowerMgmt", "Sys.Audit"}}
		fake := proxmoxtest.NewServer(c)
		e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
			c.Policy = proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
		})
		_, err := e.client.ResetGuest(ctx, resetIn(105))
		if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "could not be established") || !strings.Contains(err.Error(), "VM.GuestAgent.Audit") {
			t.Errorf("err = %v", err)
		}
		if got := nonGET(e); len(got) != 1 {
			t.Errorf("non-GET requests = %v, want only the ping", got)
		}
	})
}
