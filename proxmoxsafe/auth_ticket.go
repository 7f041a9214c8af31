package proxmoxsafe

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pveid"
)

// DefaultTicketLifetime is how long Proxmox VE accepts a login ticket (two
// hours, fixed in pve-access-control). [Config.TicketLifetime] zero means
// this value.
const DefaultTicketLifetime = pve.DefaultTicketLifetime

// minPasswordLen is the shortest password accepted. Secrets are redacted
// from upstream text by value, which is unsafe for short strings (they
// would blank ordinary words of every answer); Proxmox itself requires 8
// characters for a new password.
const minPasswordLen = 8

// User ids (user@realm), realms and token ids are checked by
// internal/pveid: Proxmox's pve-access-control rules ($user_regex,
// $realm_regex; the user part may itself contain "@", the realm follows
// the last one), written out so that a start compiles no regexp (start-up time).

// AuthMethod names how a [Client] authenticates to Proxmox.
type AuthMethod string

// Authentication methods.
const (
	// AuthToken is an API token (recommended): one header, no login.
	AuthToken AuthMethod = "token"
	// AuthTicket is a user and password: a login ticket, renewed while
	// the client runs.
	AuthTicket AuthMethod = "ticket"
)

// AuthStatus describes how a [Client] authenticates. It never holds a
// secret.
type AuthStatus struct {
	Method AuthMethod
	// Principal is the API token id (user@realm!name), or the user id
	// (user@realm) for ticket authentication.
	Principal string
	// TicketExpiry is when the current ticket expires, counted from when
	// its login was sent; zero for tokens and before the first login.
	TicketExpiry time.Time
	// TicketRenewal is when the ticket will be renewed (with the ticket
	// itself as the password) by the first request after it; zero when
	// TicketExpiry is.
	TicketRenewal time.Time
}

// AuthStatus returns the authentication method and, for tickets, the
// current ticket's lifetime. It does no I/O.
func (c *Client) AuthStatus() AuthStatus {
	st := AuthStatus{Method: AuthToken, Principal: c.tokenID}
	if c.ticket == nil {
		return st
	}
	st.Method, st.Principal = AuthTicket, c.ticket.User()
	if exp, ok := c.ticket.Expiry(); ok {
		st.TicketExpiry = exp
		st.TicketRenewal = exp.Add(-c.ticketLifetime / 2)
	}
	return st
}

// clientAuth is what New needs to authenticate: the authenticator, the
// secrets to redact, the principal and, for tickets, the ticket state.
type clientAuth struct {
	auth      pve.Authenticator
	secrets   []string
	principal string
	ticket    *pve.TicketAuth
	lifetime  time.Duration
}

// buildAuth checks the credentials of cfg: exactly one of an API token and
// a user with a password.
func buildAuth(cfg Config, logger *slog.Logger) (*clientAuth, error) {
	token := cfg.TokenID != "" || cfg.TokenSecret != ""
	user := cfg.Username != "" || cfg.Password != "" || cfg.Realm != ""
	switch {
	case token && user:
		return nil, configError("Username", "TokenID/TokenSecret and Username/Password are both set; set only one: an API token (recommended) or a user and password")
	case user:
		return buildTicketAuth(cfg, logger)
	}
	if cfg.TokenID == "" {
		return nil, configError("TokenID", "TokenID is required (or Username and Password for ticket authentication)")
	}
	if !pveid.ValidTokenID(cfg.TokenID) {
		if strings.Contains(cfg.TokenID, "=") {
			// A pasted "PVEAPIToken=user@realm!name=SECRET": never echo it.
			return nil, configError("TokenID", "TokenID holds a '=' (value not shown): it looks like the whole PVEAPIToken=USER@REALM!TOKENNAME=SECRET value; put only USER@REALM!TOKENNAME in TokenID and the secret in TokenSecret")
		}
		return nil, configError("TokenID", "TokenID %s is not of the form user@realm!tokenname (realm and token name: a letter, then at least one letter, digit, '.', '-' or '_')", sanitize.Quote(cfg.TokenID))
	}
	if cfg.TokenSecret == "" {
		return nil, configError("TokenSecret", "TokenSecret is required")
	}
	if strings.ContainsAny(cfg.TokenSecret, "\r\n\t ") {
		// Do not echo the secret, not even in part.
		return nil, configError("TokenSecret", "TokenSecret contains white space")
	}
	if cfg.TicketLifetime != 0 {
		return nil, configError("TicketLifetime", "TicketLifetime applies to Username/Password authentication only")
	}
	return &clientAuth{auth: pve.HeaderAuth("PVEAPIToken=" + cfg.TokenID + "=" + cfg.TokenSecret),
		secrets: []string{cfg.TokenSecret}, principal: cfg.TokenID}, nil
}

func buildTicketAuth(cfg Config, logger *slog.Logger) (*clientAuth, error) {
	if cfg.Username == "" {
		return nil, configError("Username", "Username is required with Password")
	}
	userID := cfg.Username
	if cfg.Realm != "" {
		if !pveid.ValidName(cfg.Realm) {
			return nil, configError("Realm", "Realm %s is not a valid realm name (e.g. pam, pve, or an LDAP/AD realm)", sanitize.Quote(cfg.Realm))
		}
		// Proxmox appends the realm to the user name; a user id that
		// already ends in it is taken as is rather than doubled.
		if !strings.HasSuffix(userID, "@"+cfg.Realm) {
			userID += "@" + cfg.Realm
		}
	}
	if strings.Contains(userID, "!") {
		return nil, configError("Username", "Username %s names an API token; use TokenID and TokenSecret for tokens", sanitize.Quote(cfg.Username))
	}
	if !pveid.ValidUserID(userID) || len(userID) > 64 {
		return nil, configError("Username", "Username %s is not a Proxmox user id: use user@realm (e.g. root@pam, automation@pve) or set Realm", sanitize.Quote(cfg.Username))
	}
	if cfg.Password == "" {
		return nil, configError("Password", "Password is required with Username")
	}
	if len(cfg.Password) < minPasswordLen {
		// Never show the password, not even its length.
		return nil, configError("Password", "Password is shorter than %d characters: such a password cannot be reliably redacted from what Proxmox sends back; use an API token (recommended) or a longer password", minPasswordLen)
	}
	lifetime := cfg.TicketLifetime
	switch {
	case lifetime == 0:
		lifetime = DefaultTicketLifetime
	case lifetime < time.Second:
		return nil, configError("TicketLifetime", "TicketLifetime must be zero (the Proxmox default, 2h) or at least 1s")
	}
	t := pve.NewTicketAuth(userID, cfg.Password, &pve.TicketOptions{Lifetime: lifetime, Logger: logger})
	return &clientAuth{auth: t, secrets: []string{cfg.Password}, principal: userID, ticket: t, lifetime: lifetime}, nil
}

// unauthorizedHint says what a 401 means for the method in use.
func unauthorizedHint(e *APIError) string {
	switch {
	case e.Path == pve.LoginPath:
		return "the login was refused: check the user name (user@realm) and the password, and that the user exists, is enabled and has not expired"
	case e.ticket && e.relogged:
		return "Proxmox rejected the login ticket even right after logging in again: check that the user is still enabled and its clocks are in sync"
	case e.ticket:
		return "Proxmox rejected the login ticket"
	}
	return "the API token was rejected: check PVE token id and secret, and that the token has not expired"
}

// secondFactorError is the refusal of an account that needs TFA: the
// client cannot answer a second-factor challenge, and must not pretend to.
func secondFactorError(err error) error {
	return fmt.Errorf("%w: proxmox: %s; use an API token (recommended: tokens never need a second factor) or an account without two-factor authentication; nothing but the login was sent", ErrUnauthorized, err)
}
