package settings

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigKeysSetting(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(with("PROXMOX_SAFE_CONFIG_KEYS", " cores, memory ,tags")...))
	if err != nil || !slices.Equal(c.ConfigKeys, []string{"cores", "memory", "tags"}) {
		t.Fatalf("ConfigKeys = %v, %v", c.ConfigKeys, err)
	}
	c, err = Parse(nil, env(base...))
	if err != nil || c.ConfigKeys != nil {
		t.Errorf("default ConfigKeys = %v, %v; want nil (the library's default)", c.ConfigKeys, err)
	}
	for v, want := range map[string]string{
		"cores,args":           `"args" can never be allowed`,
		"hostpci0":             `"hostpci0" can never be allowed`,
		"lxc.apparmor.profile": "can never be allowed",
		"net0":                 "not a config key this version can set",
		" , ":                  "at least one",
	} {
		_, err := Parse(nil, env(with("PROXMOX_SAFE_CONFIG_KEYS", v)...))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "PROXMOX_SAFE_CONFIG_KEYS") {
			t.Errorf("PROXMOX_SAFE_CONFIG_KEYS=%q: %v, want an error naming the setting and %q", v, err, want)
		}
	}
}
