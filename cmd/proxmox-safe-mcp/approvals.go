package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// approvers are the approvers the binary offers to the policy, for the
// enabled classes: the elicitation approver, always (keyed by the key file
// when one is set or a class uses elicit, see elicit_key.go; else by a key
// made at start), and the grant store when a class can use grants or the
// elicitation key persists (the store then also keeps the used nonces, so
// a restart does not make an answered elicitation answerable again). Keys
// are created only by commands that can mutate; tools and doctor read an
// existing key and check it, and otherwise use a key made at start.
func approvers(c *settings.Config, classes []proxmoxsafe.Class, stderr io.Writer) ([]proxmoxsafe.Approver, error) {
	keyPath := c.ElicitKeyPath(c.UsesLevel(classes, proxmoxsafe.LevelElicit))
	var gs *grant.Store
	if c.UsesLevel(classes, proxmoxsafe.LevelGrant) || keyPath != "" {
		var err error
		if gs, err = grantStore(c); err != nil { // approve.go
			return nil, settings.Errorf("PROXMOX_SAFE_GRANT_DIR (--grant-dir): %v", err)
		}
	}
	opts := &mcpserver.ElicitOptions{}
	if keyPath != "" {
		key, created, err := loadElicitKey(keyPath, !settings.SendsNoMutation(c.Command), c.CredentialsDir)
		switch {
		case errors.Is(err, os.ErrNotExist): // tools and doctor: not created yet
		case err != nil:
			return nil, settings.Errorf("%s: %v", settings.ElicitKeySetting, err)
		default:
			opts.Key, opts.Used = key, gs
			if created {
				fmt.Fprintf(stderr, "proxmox-safe-mcp: elicitation key %s created (0600); keep it private\n", keyPath)
			}
		}
	}
	el, err := mcpserver.NewElicitApprover(opts)
	if err != nil {
		return nil, settings.Errorf("%s: %v", settings.ElicitKeySetting, err)
	}
	out := []proxmoxsafe.Approver{el}
	if gs != nil {
		out = append(out, gs)
	}
	return out, nil
}
