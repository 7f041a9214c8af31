package redact

import (
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// ticketValue matches a Proxmox ticket anywhere in a value:
// "PVE:<user>:<hex time>::<signature>" and the console tickets without
// data, "PVEVNC:<hex time>::<signature>" (pve-common Ticket.pm
// assemble_rsa_ticket), also inside other text ("cookie:
// PVEAuthCookie=PVE:root@pam:…") and URL-encoded as a cookie value
// ("PVE%3Aroot%40pam%3A…%3A%3A…"). Use HoldsTicket, which skips the
// expression for text without "PVE".
var ticketValue = lazyre.New(`PVE[A-Z]*(?::|%3[Aa])(?:[^:\s]*?(?::|%3[Aa]))?[0-9A-Fa-f]{8}(?::|%3[Aa]){2}`)

// HoldsTicket reports whether s holds a Proxmox ticket (ticketValue)
// anywhere. Most strings have no "PVE" and cost no expression.
func HoldsTicket(s string) bool {
	return strings.Contains(s, "PVE") && ticketValue.MatchString(s)
}
