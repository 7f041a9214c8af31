package settings

import (
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// DescribeNodes formats node names (PVE_ALLOWED_NODES) for messages:
// "pve1, pve2", or "none".
func DescribeNodes(nodes []string) string {
	if len(nodes) == 0 {
		return "none"
	}
	return strings.Join(nodes, ", ")
}

// ClassNames formats mutation classes for messages: "power, snapshot", or
// "none".
func ClassNames(cs []proxmoxsafe.Class) string {
	if len(cs) == 0 {
		return "none"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// LevelsText shows a class's levels for people: "elicit, grant", or for
// the gateway's reads, which no level is asked for, "none asked (reads)".
func LevelsText(class proxmoxsafe.Class, levels []proxmoxsafe.ApprovalLevel, sep string) string {
	if class == proxmoxsafe.ClassGateway {
		return "none asked (reads)"
	}
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = string(l)
	}
	return strings.Join(names, sep)
}
