package settings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// configKeySettings are appended to the settings table (table.go): the
// config class's key allowlist.
func configKeySettings() []*setting {
	return []*setting{
		{flag: "config-keys", env: "PROXMOX_SAFE_CONFIG_KEYS", def: strings.Join(proxmoxsafe.DefaultConfigKeys(), ","),
			docDefault: "`balloon,cores,description,hostname,memory,name,onboot,sockets,swap,tags`",
			doc:        "The config keys `guest_config_set` may set or delete (class `config`), comma-separated; narrows the default. Only keys this version validates are accepted (`balloon`, `cores`, `cpulimit`, `cpuunits`, `description`, `hostname`, `memory`, `name`, `onboot`, `sockets`, `swap`, `tags`); a never-key (`args`, `hookscript`, `hostpci*`, `usb*`, `serial*`, `parallel*`, `lxc.*`, `mp*`, `cicustom`, `cipassword`, `sshkeys`, …; docs/SECURITY.md) is a startup error that says why.",
			help: "comma-separated config keys guest_config_set may set or delete (config class), narrowing the default; settable: " +
				strings.Join(proxmoxsafe.SettableConfigKeys(), ", ") + "; never args, hookscript, hostpci*, usb*, serial*, parallel*, lxc.*, mp*, cicustom or secrets",
			set: setConfigKeys},
	}
}

// setConfigKeys parses "cores, memory, tags". A never-key or a key this
// version cannot set is a startup error that names it.
func setConfigKeys(c *Config, v string) error {
	c.ConfigKeys = nil
	for _, k := range splitList(v) {
		if reason, never := proxmoxsafe.NeverConfigKey(k); never {
			return fmt.Errorf("%s can never be allowed: %s", sanitize.Quote(k), reason)
		}
		if !slices.Contains(proxmoxsafe.SettableConfigKeys(), k) {
			return fmt.Errorf("%s is not a config key this version can set (settable: %s)", sanitize.Quote(k), strings.Join(proxmoxsafe.SettableConfigKeys(), ", "))
		}
		c.ConfigKeys = append(c.ConfigKeys, k)
	}
	if len(c.ConfigKeys) == 0 {
		return fmt.Errorf("must name at least one config key (to allow none, leave the config class out of the profile)")
	}
	return nil
}
