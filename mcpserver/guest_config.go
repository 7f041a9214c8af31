package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// guestConfigTool declares the guest_config tool.
func guestConfigTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolGuestConfig,
		Title:       "Guest config",
		Description: "One guest's config as key/value strings, pending changes included; secrets \"[redacted]\".",
	}, ops(proxmoxsafe.OpGuestConfig), (*adapter).guestConfig, func() map[string]string {
		return map[string]string{
			"config":       "Config key to value. Redacted values are exactly \"[redacted]\"; cut values end with \"…\".",
			"redacted":     "Keys whose values were replaced by \"[redacted]\" because they can carry secrets.",
			"truncated":    "Keys whose values were cut to the size limit.",
			"total_keys":   "Number of keys Proxmox returned.",
			"omitted_keys": "Keys left out: beyond 256, or not a valid config key name.",
		}
	})
}

func (a *adapter) guestConfig(ctx context.Context, in proxmoxsafe.GuestConfigInput) (string, *proxmoxsafe.GuestConfigResult, error) {
	t := in.Target()
	res, err := a.client.GuestConfig(ctx, in)
	if err != nil {
		return "", nil, err
	}
	text := fmt.Sprintf("Config of %s: %d keys", guestLabel(t, res.Config["name"]+res.Config["hostname"]), len(res.Config))
	if len(res.Redacted) > 0 {
		text += "; redacted: " + strings.Join(res.Redacted, ", ")
	}
	if len(res.Truncated) > 0 {
		text += "; truncated: " + strings.Join(res.Truncated, ", ")
	}
	if res.OmittedKeys > 0 {
		text += fmt.Sprintf("; %d keys omitted", res.OmittedKeys)
	}
	return text, res, nil
}
