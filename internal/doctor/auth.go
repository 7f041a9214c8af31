package doctor

import (
	"fmt"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// How the client authenticates, as doctor reports it (the password
// settings themselves are internal/settings' auth.go).

// authSummary says how the client authenticates, for doctor.
func authSummary(st proxmoxsafe.AuthStatus) string {
	if st.Method == proxmoxsafe.AuthTicket {
		return "password login (ticket) as " + st.Principal
	}
	return "token " + st.Principal
}

// ticketLifetime describes the current ticket's remaining lifetime, for
// doctor; "" for tokens or before a login.
func ticketLifetime(st proxmoxsafe.AuthStatus, now time.Time) string {
	if st.Method != proxmoxsafe.AuthTicket || st.TicketExpiry.IsZero() {
		return ""
	}
	left := max(st.TicketExpiry.Sub(now), 0)
	return fmt.Sprintf("ticket valid for another %dh%02dm (until %s), renewed automatically from %s",
		int(left.Hours()), int(left.Minutes())%60, st.TicketExpiry.UTC().Format(time.RFC3339), st.TicketRenewal.UTC().Format(time.RFC3339))
}
