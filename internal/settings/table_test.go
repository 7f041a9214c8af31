package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestMaxWait: PROXMOX_SAFE_MAX_WAIT / --max-wait parse strictly, name the
// variable on bad input, and reach the library's Config.MaxWait.
func TestMaxWait(t *testing.T) {
	t.Parallel()
	ok := []struct {
		args []string
		env  []string
		want time.Duration
	}{
		{nil, base, 0},
		{nil, with("PROXMOX_SAFE_MAX_WAIT", "90s"), 90 * time.Second},
		{[]string{"--max-wait", "5m"}, with("PROXMOX_SAFE_MAX_WAIT", "90s"), 5 * time.Minute},
		{[]string{"--max-wait=1h"}, base, time.Hour},
		{nil, with("PROXMOX_SAFE_MAX_WAIT", " 1s "), time.Second},
	}
	for _, tc := range ok {
		c, err := Parse(tc.args, env(tc.env...))
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
			continue
		}
		if c.MaxWait != tc.want {
			t.Errorf("%v: MaxWait = %v, want %v", tc.args, c.MaxWait, tc.want)
		}
	}
	bad := []struct {
		args []string
		env  []string
		want string
	}{
		{nil, with("PROXMOX_SAFE_MAX_WAIT", "120"), `PROXMOX_SAFE_MAX_WAIT (--max-wait): must be a duration from 1s to 1h with a unit, e.g. 120s or 5m (got "120")`},
		{nil, with("PROXMOX_SAFE_MAX_WAIT", "2 min"), `PROXMOX_SAFE_MAX_WAIT (--max-wait): must be`},
		{nil, with("PROXMOX_SAFE_MAX_WAIT", "500ms"), `(got "500ms")`},
		{nil, with("PROXMOX_SAFE_MAX_WAIT", "-5s"), `(got "-5s")`},
		{[]string{"--max-wait", "2h"}, base, `--max-wait (PROXMOX_SAFE_MAX_WAIT): must be a duration from 1s to 1h`},
		{[]string{"--max-wait", "0"}, base, `(got "0")`},
	}
	for _, tc := range bad {
		_, err := Parse(tc.args, env(tc.env...))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %v: err %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}

	// A library refusal of MaxWait names the variable too.
	_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve:8006", TokenID: "a@pve!tok", TokenSecret: "s", MaxWait: time.Millisecond})
	if got := (&Config{}).LibraryError(err).Error(); !strings.HasPrefix(got, "PROXMOX_SAFE_MAX_WAIT (--max-wait): MaxWait must be") {
		t.Errorf("library error → %q", got)
	}
}
