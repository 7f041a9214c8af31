package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGatewayStartInternalsRefused: a VM start's root-only internals
// (force-cpu: QEMU's -cpu argument as a raw string, as args is;
// stateuri: start waiting for incoming state, which a migration sends;
// migratedfrom: start as a migration's target) are never sent through the
// gateway, even with the exact approval phrase: no dedicated tool sends
// them, Proxmox allows them to root@pam only, and logged in as root@pam
// by password they reach QEMU's command line and the migration machinery. Zero requests;
// the same start without them passes the policy step.
func TestGatewayStartInternalsRefused(t *testing.T) {
	t.Parallel()
	const path = "/nodes/pve1/qemu/101/status/start"
	for _, tc := range []struct{ param, value string }{
		{"force-cpu", "host,-hypervisor"},
		{"stateuri", "tcp"},
		{"migratedfrom", "pve2"},
		{"skiplock", "1"},
	} {
		t.Run(tc.param, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			params := map[string]string{tc.param: tc.value}
			_, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: params,
				Approval: exactGatewayPhrase("POST", path, params)})
			assertRefusedNothingSent(t, e, err, proxmoxsafe.ErrNotAllowed, "parameter "+tc.param+" is never sent", true)
		})
	}
	e := gatewayEnv(t, nil)
	// Without them the start is still refused, as a dedicated
	// operation's request (guest_power checks the guest first), not for a
	// parameter.
	if _, err := e.client.APIRequest(t.Context(), proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: map[string]string{"timeout": "30"}}); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "GuestPower") || strings.Contains(err.Error(), "parameter") {
		t.Fatalf("a start without them: err = %v, want the dedicated operation's refusal", err)
	}
	if got := nonGET(e); len(got) != 0 {
		t.Errorf("a start without them: non-GET requests = %v, want none", got)
	}
}
