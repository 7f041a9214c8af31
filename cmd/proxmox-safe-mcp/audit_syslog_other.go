//go:build windows || plan9

package main

import (
	"io"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
)

func dialAuditSyslog(v string) (io.Writer, func(), error) {
	_, _, err := settings.ParseAuditSyslog(v)
	return nil, nil, err
}
