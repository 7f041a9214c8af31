package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestTicketConfig: exactly one of a token and a user; the user id, realm,
// password and lifetime are checked in New, and no message shows the
// password.
func TestTicketConfig(t *testing.T) {
	t.Parallel()
	user := func(c *proxmoxsafe.Config) {
		c.TokenID, c.TokenSecret = "", ""
		c.Username, c.Password = ticketUser, ticketPassword
	}
	bad := []struct {
		name, field, substr string
		mod                 func(*proxmoxsafe.Config)
	}{
		{"token and password", "Username", "set only one", func(c *proxmoxsafe.Config) { c.Username, c.Password = ticketUser, ticketPassword }},
		{"token and realm", "Username", "set only one", func(c *proxmoxsafe.Config) { c.Realm = "pve" }},
		{"neither", "TokenID", "or Username and Password", func(c *proxmoxsafe.Config) { c.TokenID, c.TokenSecret = "", "" }},
		{"password without user", "Username", "Username is required", func(c *proxmoxsafe.Config) { user(c); c.Username = "" }},
		{"user without password", "Password", "Password is required", func(c *proxmoxsafe.Config) { user(c); c.Password = "" }},
		{"no realm", "Username", "user@realm", func(c *proxmoxsafe.Config) { user(c); c.Username = "alice" }},
		{"token id as user", "Username", "API token", func(c *proxmoxsafe.Config) { user(c); c.Username = "alice@pve!mcp" }},
		{"bad realm", "Realm", "not a valid realm", func(c *proxmoxsafe.Config) { user(c); c.Username, c.Realm = "alice", "p m" }},
		{"short password", "Password", "shorter than 8", func(c *proxmoxsafe.Config) { user(c); c.Password = "pw123" }},
		{"tiny lifetime", "TicketLifetime", "at least 1s", func(c *proxmoxsafe.Config) { user(c); c.TicketLifetime = time.Millisecond }},
		{"lifetime with a token", "TicketLifetime", "Username/Password", func(c *proxmoxsafe.Config) { c.TicketLifetime = time.Hour }},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig()
			tc.mod(&cfg)
			_, err := proxmoxsafe.New(cfg)
			var ce *proxmoxsafe.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), tc.substr) {
				t.Fatalf("err = %v (field %q), want a ConfigError on %s mentioning %q", err, fieldOf(ce), tc.field, tc.substr)
			}
			if strings.Contains(err.Error(), ticketPassword) || strings.Contains(err.Error(), "pw123") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	good := []struct{ name, username, realm, want string }{
		{"user@realm", "alice@pve", "", "alice@pve"},
		{"user and realm", "alice", "pam", "alice@pam"},
		{"realm given twice", "alice@pam", "pam", "alice@pam"},
		{"user with @ and a realm", "alice@example.com", "ldap", "alice@example.com@ldap"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig()
			user(&cfg)
			cfg.Username, cfg.Realm = tc.username, tc.realm
			c, err := proxmoxsafe.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if st := c.AuthStatus(); st.Method != proxmoxsafe.AuthTicket || st.Principal != tc.want || c.TokenID() != tc.want {
				t.Errorf("AuthStatus = %+v, want ticket for %s", st, tc.want)
			}
		})
	}
	c, err := proxmoxsafe.New(baseConfig())
	if err != nil {
		t.Fatal(err)
	}
	if st := c.AuthStatus(); st.Method != proxmoxsafe.AuthToken || st.Principal != "automation@pve!mcp" || !st.TicketExpiry.IsZero() {
		t.Errorf("token AuthStatus = %+v", st)
	}
}

func fieldOf(ce *proxmoxsafe.ConfigError) string {
	if ce == nil {
		return ""
	}
	return ce.Field
}
