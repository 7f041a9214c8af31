package proxmoxsafe_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestNeverConfigKeys: case variants and indexes of the never-keys are
// refused by New (in the allowlist) and by SetGuestConfig (before any
// request).
func TestNeverConfigKeys(t *testing.T) {
	t.Parallel()
	never := []string{"args", "ARGS", "Args", "hookscript", "HookScript", "cicustom", "cipassword", "sshkeys", "smbios1",
		"hostpci", "hostpci0", "HOSTPCI15", "usb3", "serial0", "parallel2", "mp0", "MP255", "dev0", "virtiofs1", "unused0",
		"lxc", "lxc.apparmor.profile", "LXC.cgroup2.devices.allow", "lxc.mount.entry", "env", "entrypoint",
		"lock", "protection", "template", "features", "unprivileged", " args"}
	for _, k := range never {
		if _, ok := proxmoxsafe.NeverConfigKey(k); !ok {
			t.Errorf("NeverConfigKey(%q) = false", k)
		}
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "user@pve!tok", TokenSecret: "s",
			Policy: proxmoxsafe.Policy{ConfigKeys: []string{k}}})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "can never be allowed") {
			t.Errorf("New with ConfigKeys [%q]: %v, want a ConfigError saying it can never be allowed", k, err)
		}
	}
	for _, k := range []string{"cores", "memory", "description", "mpx", "hostname"} {
		if r, ok := proxmoxsafe.NeverConfigKey(k); ok {
			t.Errorf("NeverConfigKey(%q) = %q, want not a never-key", k, r)
		}
	}
	e := newConfigEnv(t, nil)
	for _, k := range never {
		for _, typ := range []proxmoxsafe.GuestType{"qemu", "lxc"} {
			_, err := e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: 100}, Set: map[string]string{k: "x"}})
			if !errors.Is(err, proxmoxsafe.ErrInvalidInput) || !strings.Contains(err.Error(), "never") {
				t.Errorf("set %q on %s: %v, want invalid input naming it a never-key", k, typ, err)
			}
			_, err = e.client.SetGuestConfig(t.Context(), proxmoxsafe.SetGuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: 100}, Delete: []string{k}})
			if !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
				t.Errorf("delete %q on %s: %v, want invalid input", k, typ, err)
			}
		}
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d upstream requests after never-key refusals, want none", n)
	}
}

func TestConfigKeysPolicy(t *testing.T) {
	t.Parallel()
	_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "user@pve!tok", TokenSecret: "s",
		Policy: proxmoxsafe.Policy{ConfigKeys: []string{"net0"}}})
	if err == nil || !strings.Contains(err.Error(), "not a key this version can set") {
		t.Errorf("New with an unknown key: %v", err)
	}
	e := newConfigEnv(t, nil)
	if got := e.client.Policy().ConfigKeys; !slices.Equal(got, proxmoxsafe.DefaultConfigKeys()) {
		t.Errorf("default ConfigKeys = %v, want %v", got, proxmoxsafe.DefaultConfigKeys())
	}
	e = newConfigEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ConfigKeys = []string{"cpulimit", "cores"} })
	if got := e.client.Policy().ConfigKeys; !slices.Equal(got, []string{"cores", "cpulimit"}) {
		t.Errorf("ConfigKeys = %v", got)
	}
}
