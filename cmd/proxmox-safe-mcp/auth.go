package main

import (
	"fmt"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Password (ticket) authentication settings: PVE_USERNAME, PVE_PASSWORD,
// PVE_PASSWORD_FILE and PVE_REALM, the alternative to an API token for
// accounts without two-factor authentication. Tokens stay recommended.

// setPassword is PVE_PASSWORD; like the token secret it has no flag.
func setPassword(c *config, v string) error {
	c.Password, c.passwordFrom = secret{v}, "PVE_PASSWORD"
	return nil
}

// usesPassword reports whether any password setting is present.
func (c *config) usesPassword() bool {
	return c.Username != "" || !c.Password.empty() || c.PasswordFile != "" || c.Realm != ""
}

// usesToken reports whether any token setting is present.
func (c *config) usesToken() bool {
	return c.TokenID != "" || !c.TokenSecret.empty() || c.TokenSecretFile != ""
}

// checkPasswordConfig checks the password settings, reading the password
// file; called when usesPassword and not usesToken. The library checks the
// rest (user id form, length) with the same words.
func checkPasswordConfig(c *config) error {
	if c.Username == "" {
		return cfgErr("PVE_USERNAME (--username) is required with a password, e.g. root@pam (or an API token instead: PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET, recommended)")
	}
	switch {
	case c.PasswordFile != "" && !c.Password.empty():
		return cfgErr("set only one of PVE_PASSWORD and PVE_PASSWORD_FILE (--password-file)")
	case c.PasswordFile != "":
		const name = "PVE_PASSWORD_FILE (--password-file)"
		pw, err := c.readSecretFile(name, c.PasswordFile) // keyfile.go
		if err != nil {
			return cfgErr("%s: %v", name, err)
		}
		c.Password, c.passwordFrom = secret{pw}, "PVE_PASSWORD_FILE"
	case c.Password.empty():
		return cfgErr("PVE_PASSWORD or PVE_PASSWORD_FILE (--password-file) is required with PVE_USERNAME")
	}
	return nil
}

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
