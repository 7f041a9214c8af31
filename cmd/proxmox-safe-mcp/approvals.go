package main

import (
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
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

// approvers are the approvers the binary offers to the policy: the
// elicitation approver, with a key made at start (an elicitation is
// answered within minutes, and one in flight during a restart is asked
// again), and the grant store when a class uses grants (approve.go).
func approvers(c *config) ([]proxmoxsafe.Approver, error) {
	el, err := mcpserver.NewElicitApprover(nil)
	if err != nil {
		return nil, err
	}
	out := []proxmoxsafe.Approver{el}
	gs, err := grantStore(c)
	if err != nil {
		return nil, cfgErr("PROXMOX_SAFE_APPROVALS (--approvals): %v", err)
	}
	if gs != nil {
		out = append(out, gs)
	}
	return out, nil
}
