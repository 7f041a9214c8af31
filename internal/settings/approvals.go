package settings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
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
func parseApprovals(c *Config, v string) error {
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
			return fmt.Errorf("%s is not CLASS=LEVEL[,LEVEL…] (e.g. power=elicit,phrase)", sanitize.Quote(part))
		}
		if _, dup := out[proxmoxsafe.Class(class)]; dup {
			return fmt.Errorf("class %s is listed twice", sanitize.Quote(class))
		}
		var levels []proxmoxsafe.ApprovalLevel
		for l := range strings.SplitSeq(list, ",") {
			level := proxmoxsafe.ApprovalLevel(strings.TrimSpace(l))
			if !knownLevel(level) {
				return fmt.Errorf("class %s: unknown approval level %s (known: none, phrase, elicit, grant)", sanitize.Quote(class), sanitize.Quote(level))
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
// (PROXMOX_SAFE_APPROVALS), else none for the responder class (ApplyProtect,
// protect.go), else the library's default for the class.
func (c *Config) EffectiveLevels(class proxmoxsafe.Class) []proxmoxsafe.ApprovalLevel {
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
func (c *Config) UsesLevel(classes []proxmoxsafe.Class, level proxmoxsafe.ApprovalLevel) bool {
	for _, levels := range c.Approvals {
		if slices.Contains(levels, level) {
			return true
		}
	}
	if c.ReadOnly {
		return false
	}
	for _, cl := range classes {
		if slices.Contains(c.EffectiveLevels(cl), level) {
			return true
		}
	}
	return false
}
