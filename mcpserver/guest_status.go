package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guestStatusTool declares the guest_status tool.
func guestStatusTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolGuestStatus,
		Title:       "Guest status",
		Description: "One guest's live state: status (a paused VM is running, qmpstatus paused), uptime, usage, I/O, lock, HA, agent, tags.",
	}, ops(proxmoxsafe.OpGuestStatus), (*adapter).guestStatus, func() map[string]string {
		return map[string]string{
			"status":        "running or stopped; a paused VM is running (see paused).",
			"paused":        "True for a running VM whose CPUs are paused.",
			"lock":          "Config lock (backup, snapshot, migrate, …); absent when unlocked. A locked guest refuses most actions.",
			"ha_managed":    "True when the HA manager owns the guest's power state.",
			"agent_enabled": "True when the QEMU guest agent is enabled in the VM's config (not proof it runs). Always false for containers.",
			"disk":          "Bytes used: a container's root file system; Proxmox reports 0 for VMs.",
			"uptime":        "Seconds since the guest started; 0 when stopped.",
			"cpu":           "CPU usage as a fraction of the guest's CPUs (0 to 1).",
		}
	})
}

func (a *adapter) guestStatus(ctx context.Context, in proxmoxsafe.GuestStatusInput) (string, *proxmoxsafe.GuestStatusResult, error) {
	t := in.Target()
	res, err := a.client.GuestStatus(ctx, in)
	if err != nil {
		return "", nil, err
	}
	state := clean(res.Status, 16)
	if res.Paused {
		state += " (paused)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", guestLabel(t, res.Name), state)
	if res.Status == "running" {
		fmt.Fprintf(&b, ", up %s, CPU %.0f%% of %d, memory %s of %s", duration(res.Uptime), res.CPU*100, res.CPUs, gib(res.Mem), gib(res.MaxMem))
	}
	if res.Lock != "" {
		fmt.Fprintf(&b, ", locked (%s)", clean(res.Lock, 32))
	}
	if res.Template {
		b.WriteString(", template")
	}
	if res.HAManaged {
		fmt.Fprintf(&b, ", HA-managed (%s)", orNone(clean(res.HAState, 32)))
	}
	return b.String(), res, nil
}
