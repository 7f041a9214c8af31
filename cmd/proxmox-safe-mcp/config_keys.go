package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// configKeySettings are appended to the settings table (config.go): the
// config class's key allowlist.
func configKeySettings() []*setting {
	return []*setting{
		{flag: "config-keys", env: "PROXMOX_SAFE_CONFIG_KEYS", def: strings.Join(proxmoxsafe.DefaultConfigKeys(), ","),
			help: "comma-separated config keys guest_config_set may set or delete (config class), narrowing the default; settable: " +
				strings.Join(proxmoxsafe.SettableConfigKeys(), ", ") + "; never args, hookscript, hostpci*, usb*, serial*, parallel*, lxc.*, mp*, cicustom or secrets",
			set: setConfigKeys},
	}
}

// setConfigKeys parses "cores, memory, tags". A never-key or a key this
// version cannot set is a startup error that names it.
func setConfigKeys(c *config, v string) error {
	c.ConfigKeys = nil
	for _, k := range splitList(v) {
		if reason, never := proxmoxsafe.NeverConfigKey(k); never {
			return fmt.Errorf("%q can never be allowed: %s", k, reason)
		}
		if !slices.Contains(proxmoxsafe.SettableConfigKeys(), k) {
			return fmt.Errorf("%q is not a config key this version can set (settable: %s)", k, strings.Join(proxmoxsafe.SettableConfigKeys(), ", "))
		}
		c.ConfigKeys = append(c.ConfigKeys, k)
	}
	if len(c.ConfigKeys) == 0 {
		return fmt.Errorf("must name at least one config key (to allow none, leave the config class out of the profile)")
	}
	return nil
}
