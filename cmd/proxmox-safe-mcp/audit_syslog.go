//go:build !windows && !plan9

package main

import (
	"fmt"
	"io"
	"log/syslog"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

// auditSyslogTag is the syslog tag of audit records; the journal's
// SYSLOG_IDENTIFIER, so `journalctl -t proxmox-safe-mcp-audit -o cat`
// prints exactly the log's lines.
const auditSyslogTag = "proxmox-safe-mcp-audit"

// dialAuditSyslog connects to syslog with facility authpriv (readable only
// by administrators on most systems) and severity info. Each Write is one
// message: the audit log (auditlog.Log) writes one record per call.
func dialAuditSyslog(v string) (io.Writer, func(), error) {
	network, addr, err := settings.ParseAuditSyslog(v)
	if err != nil {
		return nil, nil, err
	}
	w, err := syslog.Dial(network, addr, syslog.LOG_AUTHPRIV|syslog.LOG_INFO, auditSyslogTag)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot connect to syslog (%s): %v", v, err)
	}
	return w, func() { _ = w.Close() }, nil
}
