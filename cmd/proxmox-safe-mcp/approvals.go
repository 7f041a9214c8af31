package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// approvalLevels are the levels the binary can serve.
var approvalLevels = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelNone, proxmoxsafe.LevelPhrase, proxmoxsafe.LevelElicit, proxmoxsafe.LevelGrant}

// parseApprovals reads PROXMOX_SAFE_APPROVALS: per mutation class, the
// approval levels in order of preference, e.g.
//
//	power=elicit,phrase;snapshot=elicit
//
// A class left out keeps its profile's default (the phrase). Unknown
// classes are reported by the library, which knows them.
func parseApprovals(c *config, v string) error {
	c.Approvals = nil
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	out := map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{}
	for part := range strings.SplitSeq(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		class, list, ok := strings.Cut(part, "=")
		class = strings.TrimSpace(class)
		if !ok || class == "" || strings.TrimSpace(list) == "" {
			return fmt.Errorf("%q is not CLASS=LEVEL[,LEVEL…] (e.g. power=elicit,phrase)", part)
		}
		if _, dup := out[proxmoxsafe.Class(class)]; dup {
			return fmt.Errorf("class %q is listed twice", class)
		}
		var levels []proxmoxsafe.ApprovalLevel
		for l := range strings.SplitSeq(list, ",") {
			level := proxmoxsafe.ApprovalLevel(strings.TrimSpace(l))
			if !knownLevel(level) {
				return fmt.Errorf("class %q: unknown approval level %q (known: none, phrase, elicit, grant)", class, level)
			}
			levels = append(levels, level)
		}
		out[proxmoxsafe.Class(class)] = levels
	}
	c.Approvals = out
	return nil
}

func knownLevel(l proxmoxsafe.ApprovalLevel) bool {
	for _, k := range approvalLevels {
		if l == k {
			return true
		}
	}
	return false
}

// effectiveLevels are the approval levels class gets: the setting
// (PROXMOX_SAFE_APPROVALS), else none for the responder class (applyGuards,
// responder.go), else the library's default for the class.
func effectiveLevels(c *config, class proxmoxsafe.Class) []proxmoxsafe.ApprovalLevel {
	if levels, ok := c.Approvals[class]; ok {
		return levels
	}
	if class == proxmoxsafe.ClassResponder {
		return []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelNone}
	}
	return proxmoxsafe.DefaultApprovals(class)
}

// usesLevel reports whether level serves a class: one the setting names
// (the library wants an approver for every level named there, enabled or
// not), or an enabled class by its default. Read-only enables none.
func usesLevel(c *config, classes []proxmoxsafe.Class, level proxmoxsafe.ApprovalLevel) bool {
	for _, levels := range c.Approvals {
		if slices.Contains(levels, level) {
			return true
		}
	}
	if c.ReadOnly {
		return false
	}
	for _, cl := range classes {
		if slices.Contains(effectiveLevels(c, cl), level) {
			return true
		}
	}
	return false
}

// approvers are the approvers the binary offers to the policy, for the
// enabled classes: the elicitation approver, always (keyed by the key file
// when one is set or a class uses elicit, see elicit_key.go; else by a key
// made at start), and the grant store when a class can use grants or the
// elicitation key persists (the store then also keeps the used nonces, so
// a restart does not make an answered elicitation answerable again). Keys
// are created only by commands that can mutate; tools and doctor read an
// existing key and check it, and otherwise use a key made at start.
func approvers(c *config, classes []proxmoxsafe.Class, stderr io.Writer) ([]proxmoxsafe.Approver, error) {
	keyPath := elicitKeyPath(c, usesLevel(c, classes, proxmoxsafe.LevelElicit))
	var gs *grant.Store
	if usesLevel(c, classes, proxmoxsafe.LevelGrant) || keyPath != "" {
		var err error
		if gs, err = grantStore(c); err != nil { // approve.go
			return nil, cfgErr("PROXMOX_SAFE_GRANT_DIR (--grant-dir): %v", err)
		}
	}
	opts := &mcpserver.ElicitOptions{}
	if keyPath != "" {
		key, created, err := loadElicitKey(keyPath, !sendsNoMutation(c.Command), c.credentialsDir)
		switch {
		case errors.Is(err, os.ErrNotExist): // tools and doctor: not created yet
		case err != nil:
			return nil, cfgErr("%s: %v", elicitKeySetting, err)
		default:
			opts.Key, opts.Used = key, gs
			if created {
				fmt.Fprintf(stderr, "proxmox-safe-mcp: elicitation key %s created (0600); keep it private\n", keyPath)
			}
		}
	}
	el, err := mcpserver.NewElicitApprover(opts)
	if err != nil {
		return nil, cfgErr("%s: %v", elicitKeySetting, err)
	}
	out := []proxmoxsafe.Approver{el}
	if gs != nil {
		out = append(out, gs)
	}
	return out, nil
}

// levelsText shows a class's levels for people: "elicit, grant", or for
// the gateway's reads, which no level is asked for, "none asked (reads)".
func levelsText(class proxmoxsafe.Class, levels []proxmoxsafe.ApprovalLevel, sep string) string {
	if class == proxmoxsafe.ClassGateway {
		return "none asked (reads)"
	}
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = string(l)
	}
	return strings.Join(names, sep)
}
