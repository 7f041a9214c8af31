//go:build !windows && !plan9

package settings

import (
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// ParseAuditSyslog splits a PROXMOX_SAFE_AUDIT_SYSLOG value into what
// syslog.Dial takes: "local" is the local syslog socket (journald's or
// rsyslog's /dev/log), the others name a network and address.
func ParseAuditSyslog(v string) (network, addr string, err error) {
	switch {
	case v == "local":
		return "", "", nil
	case strings.HasPrefix(v, "udp://"), strings.HasPrefix(v, "tcp://"):
		network, addr, _ = strings.Cut(v, "://")
		if !strings.Contains(addr, ":") {
			return "", "", fmt.Errorf("%s needs a port, e.g. %s://logs.example.com:514", sanitize.Quote(v), network)
		}
		return network, addr, nil
	case strings.HasPrefix(v, "unix:///"):
		return "unixgram", strings.TrimPrefix(v, "unix://"), nil
	}
	return "", "", fmt.Errorf("must be local, udp://HOST:PORT, tcp://HOST:PORT or unix:///PATH (got %s)", sanitize.

		// dialAuditSyslog connects to syslog with facility authpriv (readable only
		// by administrators on most systems) and severity info. Each Write is one
		Quote(v))
}
