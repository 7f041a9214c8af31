//go:build !windows && !plan9

package settings

import (
	"strings"
	"testing"
)

func TestParseAuditSyslog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ v, network, addr, err string }{
		{"local", "", "", ""},
		{"udp://logs:514", "udp", "logs:514", ""},
		{"tcp://logs", "", "", "needs a port"},
		{"unix:///dev/log", "unixgram", "/dev/log", ""},
		{"syslog://x", "", "", "must be local"},
	} {
		n, a, err := ParseAuditSyslog(tc.v)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || n != tc.network || a != tc.addr {
			t.Errorf("%q: %q %q %v", tc.v, n, a, err)
		}
	}
}
