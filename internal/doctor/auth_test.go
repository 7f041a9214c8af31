package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestAuthSummaryAndTicketLifetime(t *testing.T) {
	t.Parallel()
	if got := authSummary(proxmoxsafe.AuthStatus{Principal: "a@pve!t"}); got != "token a@pve!t" {
		t.Errorf("token: %q", got)
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	st := proxmoxsafe.AuthStatus{Method: proxmoxsafe.AuthTicket, Principal: "root@pam", TicketExpiry: now.Add(90 * time.Minute), TicketRenewal: now.Add(time.Hour)}
	if got := authSummary(st); got != "password login (ticket) as root@pam" {
		t.Errorf("ticket: %q", got)
	}
	if got := ticketLifetime(st, now); !strings.HasPrefix(got, "ticket valid for another 1h30m (until 2026-01-01T11:30:00Z)") {
		t.Errorf("lifetime: %q", got)
	}
	if got := ticketLifetime(proxmoxsafe.AuthStatus{}, now); got != "" {
		t.Errorf("token lifetime: %q", got)
	}
}
