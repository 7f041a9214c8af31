package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Two reboots a second apart: the first goes through, the second meets
// the minimum uptime (the fake resets uptime on reboot).
func TestRebootLoopRefused(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, nil)
	ctx := t.Context()
	r, err := e.client.RebootGuest(ctx, guarded(100, "qemu", "reboot"))
	if err != nil {
		t.Fatalf("first reboot: %v", err)
	}
	if _, err := e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: r.UPID}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.RebootGuest(ctx, guarded(100, "qemu", "reboot"))
	if !errors.Is(err, proxmoxsafe.ErrPrecondition) || !strings.Contains(err.Error(), "minimum uptime") {
		t.Fatalf("second reboot: %v", err)
	}
	if got := nonGET(e); !slices.Equal(got, []string{"POST /nodes/pve1/qemu/100/status/reboot"}) {
		t.Errorf("non-GET requests = %v", got)
	}
	// MinUptime < 0 turns the guard off; a custom one applies as set.
	off := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.MinUptime = -1 })
	if _, err := off.client.RebootGuest(ctx, guarded(104, "qemu", "reboot")); err != nil {
		t.Errorf("reboot with the guard off: %v", err)
	}
	short := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.MinUptime = 30 * time.Second })
	if _, err := short.client.RebootGuest(ctx, guarded(104, "qemu", "reboot")); err != nil {
		t.Errorf("reboot after 60s with a 30s minimum: %v", err)
	}
}
