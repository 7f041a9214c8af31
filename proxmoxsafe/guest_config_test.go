package proxmoxsafe_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// secretCluster is testCluster with a secret in every config key that can
// carry one. Each secret is a distinct marker, so a test can tell which
// redaction failed.
func secretCluster() (*proxmoxtest.Cluster, map[string]string) {
	c := testCluster()
	qemu := map[string]string{
		"cipassword":   "SECRET-cipassword",
		"args":         "-fw_cfg name=opt/token,string=SECRET-args",
		"hookscript":   "local:snippets/SECRET-hookscript.pl",
		"sshkeys":      "ssh-ed25519%20AAAASECRET-sshkeys%20me%40host%0A",
		"cicustom":     "user=local:snippets/SECRET-cicustom.yaml",
		"smbios1":      "uuid=00000000-0000-4000-8000-000000000100,serial=U0VDUkVULXNtYmlvczE=,base64=1",
		"api_password": "SECRET-unknown-password-key",
		"ciuser":       "admin",
	}
	lxc := map[string]string{
		"env":        "DB_PASS=SECRET-env\x00MODE=prod",
		"entrypoint": "/app --token SECRET-entrypoint",
		"lxc.cap":    "SECRET-lxc-top-level",
	}
	c.Guests[0].Config = qemu
	c.Guests[7].Config = lxc // 200
	c.Guests[7].LXCRaw = [][2]string{{"lxc.environment", "PASS=SECRET-lxc-raw"}, {"lxc.apparmor.profile", "unconfined"}}
	secrets := map[string]string{
		"cipassword": "SECRET-cipassword", "args": "SECRET-args", "hookscript": "SECRET-hookscript",
		"sshkeys": "SECRET-sshkeys", "cicustom": "SECRET-cicustom", "smbios1": "U0VDUkVULXNtYmlvczE=",
		"api_password": "SECRET-unknown", "env": "SECRET-env", "entrypoint": "SECRET-entrypoint",
		"lxc.cap": "SECRET-lxc-top", "lxc": "SECRET-lxc-raw",
	}
	return c, secrets
}

func TestGuestConfigRedactsEverySecretKey(t *testing.T) {
	t.Parallel()
	c, secrets := secretCluster()
	e := newEnvWith(t, c, nil)
	vm, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal([]any{vm, ct})
	for key, secret := range secrets {
		t.Run(key, func(t *testing.T) {
			if strings.Contains(string(all), secret) {
				t.Errorf("secret of %s leaked: %s", key, all)
			}
			res := vm
			if _, ok := vm.Config[key]; !ok {
				res = ct
			}
			if res.Config[key] != proxmoxsafe.RedactedValue || !slices.Contains(res.Redacted, key) {
				t.Errorf("%s = %q (redacted %v), want %q and listed", key, res.Config[key], res.Redacted, proxmoxsafe.RedactedValue)
			}
		})
	}
	if want := []string{"api_password", "args", "cicustom", "cipassword", "hookscript", "smbios1", "sshkeys"}; !slices.Equal(vm.Redacted, want) {
		t.Errorf("qemu redacted = %v, want %v", vm.Redacted, want)
	}
	if want := []string{"entrypoint", "env", "lxc", "lxc.cap"}; !slices.Equal(ct.Redacted, want) {
		t.Errorf("lxc redacted = %v, want %v", ct.Redacted, want)
	}
	// Ordinary keys pass, numbers as digits.
	if vm.Config["ciuser"] != "admin" || vm.Config["cores"] != "2" || vm.Config["name"] != "web1" || vm.Config["digest"] == "" || vm.Config["net0"] == "" {
		t.Errorf("qemu config = %v", vm.Config)
	}
	if ct.Config["hostname"] != "ct1" || ct.Config["unprivileged"] != "1" {
		t.Errorf("lxc config = %v", ct.Config)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"GET /nodes/pve1/qemu/100/config", "GET /nodes/pve1/lxc/200/config"}) {
		t.Errorf("requests = %v", got)
	}
	if q := e.requests()[0].Query; len(q) != 0 {
		t.Errorf("query = %v", q)
	}
	// Nothing of it reaches the logs either.
	for _, secret := range secrets {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}

// TestGuestConfigRedactsUnmaskedPassword: PVE masks cipassword, but the
// library must not rely on it.
func TestGuestConfigRedactsUnmaskedPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/nodes/pve1/qemu/101/config", Status: 200,
		Body: []byte(`{"data":{"cipassword":"clear-text-pw","cores":2,"smbios1":"uuid=00000000-0000-4000-8000-000000000101","agent":null,"numa":false,"weird":["a",{"b":1}]}}`)})
	r, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "clear-text-pw") || r.Config["cipassword"] != proxmoxsafe.RedactedValue {
		t.Errorf("result = %s", b)
	}
	// A plain uuid smbios1 is what Proxmox writes itself: kept.
	for k, want := range map[string]string{"smbios1": "uuid=00000000-0000-4000-8000-000000000101", "cores": "2", "agent": "", "numa": "0", "weird": `["a",{"b":1}]`} {
		if r.Config[k] != want {
			t.Errorf("%s = %q, want %q", k, r.Config[k], want)
		}
	}
	if !slices.Equal(r.Redacted, []string{"cipassword"}) {
		t.Errorf("redacted = %v", r.Redacted)
	}
}

func TestGuestConfigBounds(t *testing.T) {
	t.Parallel()
	c := testCluster()
	g := c.Guests[1] // 101
	g.Description = "Owner: ops\n\x1b[31mred\x1b[0m \u200bzero\u200dwidth \u202eevil\u202c\r\n" + strings.Repeat("d", 1000)
	g.Config = map[string]string{"longvalue": strings.Repeat("v", 5000), "net1": "virtio=AA:BB,\u2066bridge\u2069=vmbr0\x07"}
	for i := range 300 {
		g.Config[fmt.Sprintf("zz%03d", i)] = "x"
	}
	e := newEnvWith(t, c, nil)
	r, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Config) != proxmoxsafe.MaxConfigKeys || r.OmittedKeys != r.TotalKeys-proxmoxsafe.MaxConfigKeys || r.TotalKeys < 300 {
		t.Errorf("%d keys shown, %d omitted of %d", len(r.Config), r.OmittedKeys, r.TotalKeys)
	}
	d := r.Config["description"]
	if len(d) > proxmoxsafe.MaxDescriptionLen || !strings.HasSuffix(d, "…") || !strings.HasPrefix(d, "Owner: ops\nred zerowidth evil\n") {
		t.Errorf("description (%d bytes) = %q", len(d), d)
	}
	if v := r.Config["longvalue"]; len(v) > proxmoxsafe.MaxConfigValueLen || !strings.HasSuffix(v, "…") {
		t.Errorf("long value: %d bytes", len(v))
	}
	if r.Config["net1"] != "virtio=AA:BB,bridge=vmbr0" {
		t.Errorf("net1 = %q", r.Config["net1"])
	}
	if !slices.Equal(r.Truncated, []string{"description", "longvalue"}) {
		t.Errorf("truncated = %v", r.Truncated)
	}
}

func TestGuestConfigOmitsInvalidKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/nodes/pve1/qemu/101/config", Status: 200,
		Body: []byte(`{"data":{"cores":2,"bad\u202ekey":"x","a\u200bb":"y","":"z","9x":"w"}}`)})
	r, err := e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Config) != 1 || r.Config["cores"] != "2" || r.OmittedKeys != 4 || r.TotalKeys != 5 {
		t.Errorf("result = %+v", r)
	}
}
