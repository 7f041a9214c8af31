package proxmoxsafe_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestGuestConfigAsStrictAsGateway: guest_config and api_get of the same
// config apply one rule set: every value the gateway redacts, whole or in
// part, guest_config redacts too and lists, and neither shows a secret.
// Before, a description "db_password=X" was shown by guest_config and
// redacted by api_get.
func TestGuestConfigAsStrictAsGateway(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"description": "notes\ndb_password=SECRET-desc1",
		"tags":        "token=SECRET-tags",
		"vmgenid":     "PVE:root@pam:6A1B2C3D::SECRET-ticket",
		"tfa":         "type=yubico,id=1,key=SECRET-tfa",
		"ciuser":      "admin",
		"cores":       "2",
	}
	cfg := map[string]string{}
	for k, v := range secrets {
		cfg[k] = v
	}
	body, _ := json.Marshal(map[string]any{"data": cfg})
	e := gatewayEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/config", Status: 200, Body: body})
	gc, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/qemu/100/config"})
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal([]any{gc, gw})
	if strings.Contains(string(shown), "SECRET-") {
		t.Errorf("a secret is shown:\n%s", shown)
	}
	for _, at := range gw.Redacted {
		key := strings.TrimPrefix(at, "data.")
		if !slices.Contains(gc.Redacted, key) {
			t.Errorf("api_get redacts %s, guest_config does not list it (redacted %v): %q", key, gc.Redacted, gc.Config[key])
		}
	}
	for _, key := range []string{"description", "tags", "vmgenid", "tfa"} {
		if !slices.Contains(gc.Redacted, key) {
			t.Errorf("guest_config does not list %s as redacted: %v", key, gc.Redacted)
		}
	}
	if d := gc.Config["description"]; !strings.Contains(d, "notes") || !strings.Contains(d, "db_password=[redacted]") {
		t.Errorf("description = %q, want the notes kept and the password redacted", d)
	}
	if gc.Config["ciuser"] != "admin" || gc.Config["cores"] != "2" {
		t.Errorf("plain keys changed: %v", gc.Config)
	}
}
