//go:build windows || plan9

package settings

import "errors"

// ParseAuditSyslog refuses every value: this platform has no syslog.
func ParseAuditSyslog(string) (string, string, error) {
	return "", "", errors.New("syslog is not available on this platform")
}
