package proxmoxsafe_test

import (
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestAPIErrorNamesForwardingStatuses(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]string{
		595: "595 No route to host (Proxmox could not connect to the node it forwarded the request to: the node is offline or unreachable)",
		596: "596 Broken pipe (Proxmox could not send the request to the node it forwarded it to",
		597: "597 x (the node Proxmox forwarded the request to stopped answering",
		500: "500 x",
	} {
		msg := map[int]string{595: "No route to host", 596: "Broken pipe"}[code]
		if msg == "" {
			msg = "x"
		}
		e := &proxmoxsafe.APIError{Method: "GET", Path: "/nodes/pve3/status", StatusCode: code, Message: msg}
		if got := e.Error(); !strings.Contains(got, want) || (code == 500 && strings.Contains(got, "(")) {
			t.Errorf("%d: %q, want %q", code, got, want)
		}
	}
	// And from the fake: a node-targeted read of an offline node.
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.Policy.AllowedNodes = append(c.Policy.AllowedNodes, "pve3") })
	_, err := e.client.GuestStatus(t.Context(), proxmoxsafe.GuestStatusInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve3", Type: proxmoxsafe.TypeQEMU, VMID: 300}})
	if err == nil || !strings.Contains(err.Error(), "595 No route to host (Proxmox could not connect") {
		t.Errorf("err = %v", err)
	}
}
