package pve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Authenticator puts credentials on every request a [Client] sends.
type Authenticator interface {
	// Authorize adds credentials to req, which c is about to send; it may
	// log in first (through [Client.Login]). The returned generation
	// identifies the credentials used, for Rejected.
	Authorize(ctx context.Context, c *Client, req *http.Request) (generation uint64, err error)
	// Rejected is called when Proxmox answered 401 to a request sent with
	// the credentials of generation. It reports whether newer credentials
	// are in place, so that the request is worth sending once more.
	Rejected(ctx context.Context, c *Client, generation uint64) (bool, error)
}

// HeaderAuth is a fixed Authorization header value, an API token:
// "PVEAPIToken=user@realm!name=secret". A 401 is final: a token cannot be
// renewed.
type HeaderAuth string

// Authorize implements [Authenticator].
func (h HeaderAuth) Authorize(_ context.Context, _ *Client, req *http.Request) (uint64, error) {
	req.Header.Set("Authorization", string(h))
	return 0, nil
}

// Rejected implements [Authenticator]: there is nothing to renew.
func (HeaderAuth) Rejected(context.Context, *Client, uint64) (bool, error) { return false, nil }

// DefaultTicketLifetime is how long Proxmox VE accepts a ticket
// ($ticket_lifetime in pve-access-control AccessControl.pm).
const DefaultTicketLifetime = 2 * time.Hour

// loginRetryDelay is how long a rejected login is remembered: calls in that
// window fail with the same error instead of sending the password again,
// so a wrong password cannot trip an account lockout (PAM faillock,
// fail2ban) through a busy client.
const loginRetryDelay = 30 * time.Second

// ErrSecondFactor is returned when Proxmox asks for a second factor (TOTP,
// WebAuthn, Yubico OTP, recovery key) to complete a login.
var ErrSecondFactor = errors.New("the account requires two-factor authentication")

// TicketOptions tunes a [TicketAuth]. The zero value is right for a real
// Proxmox VE server.
type TicketOptions struct {
	// Lifetime is how long the server accepts a ticket; zero means
	// [DefaultTicketLifetime]. A ticket is renewed once half of it has
	// passed.
	Lifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per login (user and kind, never a secret);
	// nil discards.
	Logger *slog.Logger
}

// TicketAuth logs in with a user name and password (POST /access/ticket)
// and sends the ticket as the PVEAuthCookie cookie on every request and
// the CSRFPreventionToken header on every request but GET. It renews the
// ticket with the current ticket as the password once half its lifetime
// has passed, and logs in with the password again when Proxmox rejects the
// ticket. Concurrent requests share one login. Every password, ticket and
// CSRF token is registered with the Client's Redactor.
type TicketAuth struct {
	user, password string
	lifetime       time.Duration
	now            func() time.Time
	log            *slog.Logger

	mu      sync.Mutex
	cur     *ticketSession
	gen     uint64
	flight  *loginFlight
	failed  error     // the last rejected login, remembered for loginRetryDelay
	failAt  time.Time // when it was rejected
	retired []*ticketSession
}

// ticketSession is one ticket and its CSRF token.
type ticketSession struct {
	ticket, csrf string
	cookie       string // the Cookie header value, escaped once per login
	// obtained is when the login request was sent: the ticket cannot be
	// older, so expiry computed from it is never late.
	obtained time.Time
	gen      uint64
}

// loginFlight is a login in progress; done closes when err is set.
type loginFlight struct {
	done chan struct{}
	err  error
}

// NewTicketAuth returns a TicketAuth for user ("name@realm") and password.
// It does no I/O: the first request logs in.
func NewTicketAuth(user, password string, opts *TicketOptions) *TicketAuth {
	t := &TicketAuth{user: user, password: password, lifetime: DefaultTicketLifetime, now: time.Now,
		log: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.Lifetime > 0 {
			t.lifetime = opts.Lifetime
		}
		if opts.Now != nil {
			t.now = opts.Now
		}
		if opts.Logger != nil {
			t.log = opts.Logger
		}
	}
	return t
}

// SetClock replaces the clock (tests move time forward with it).
func (t *TicketAuth) SetClock(now func() time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.now = now
}

// clock reads the clock without t.mu held.
func (t *TicketAuth) clock() time.Time {
	t.mu.Lock()
	now := t.now
	t.mu.Unlock()
	return now()
}

// User returns the user the ticket is for.
func (t *TicketAuth) User() string { return t.user }

// Expiry returns when the current ticket expires, and false before the
// first login.
func (t *TicketAuth) Expiry() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return time.Time{}, false
	}
	return t.cur.obtained.Add(t.lifetime), true
}

// renewAfter is the age at which a ticket is renewed: half its lifetime
// (an hour on a real server), well before it expires.
func (t *TicketAuth) renewAfter() time.Duration { return t.lifetime / 2 }

// usableFor is the age up to which a ticket is still sent while another
// request renews it, with a margin for clock steps and slow requests.
func (t *TicketAuth) usableFor() time.Duration { return t.lifetime - t.lifetime/8 }

// Authorize implements [Authenticator].
func (t *TicketAuth) Authorize(ctx context.Context, c *Client, req *http.Request) (uint64, error) {
	s, err := t.session(ctx, c, 0)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Cookie", s.cookie)
	if req.Method != http.MethodGet {
		// pve-manager auth_handler checks the CSRF token on every method
		// but GET; reads never carry it.
		req.Header.Set("CSRFPreventionToken", s.csrf)
	}
	return s.gen, nil
}

// Rejected implements [Authenticator]: the ticket of generation was
// refused, so log in with the password unless another request already did.
func (t *TicketAuth) Rejected(ctx context.Context, c *Client, generation uint64) (bool, error) {
	if _, err := t.session(ctx, c, generation); err != nil {
		return false, err
	}
	return true, nil
}

// session returns a ticket to send. stale is the generation of a ticket
// Proxmox refused (0: none): only a newer one will do, obtained with the
// password. Exactly one caller logs in at a time; the others wait for it,
// or keep sending the current ticket while it is renewed early.
func (t *TicketAuth) session(ctx context.Context, c *Client, stale uint64) (*ticketSession, error) {
	t.mu.Lock()
	for {
		cur := t.cur
		if cur != nil && stale != 0 && cur.gen <= stale {
			cur = nil // the refused ticket, or older
		}
		var age time.Duration
		if cur != nil {
			age = t.now().Sub(cur.obtained)
		}
		if cur != nil && age < t.renewAfter() {
			t.mu.Unlock()
			return cur, nil
		}
		usable := cur != nil && age < t.usableFor()
		if f := t.flight; f != nil {
			if usable {
				t.mu.Unlock()
				return cur, nil
			}
			t.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			t.mu.Lock()
			if f.err != nil {
				t.mu.Unlock()
				return nil, f.err
			}
			continue
		}
		if t.failed != nil && t.now().Sub(t.failAt) < loginRetryDelay {
			err := t.failed
			t.mu.Unlock()
			return nil, err
		}
		f := &loginFlight{done: make(chan struct{})}
		t.flight = f
		renewWith := ""
		if usable {
			renewWith = cur.ticket
		}
		t.mu.Unlock()
		// One caller's cancellation must not fail the others waiting for
		// this login; the HTTP client's timeout still bounds it.
		s, err := t.login(context.WithoutCancel(ctx), c, renewWith)
		t.mu.Lock()
		t.flight = nil
		f.err = err
		close(f.done)
		if err != nil {
			if isLoginRejection(err) {
				t.failed, t.failAt = err, t.now()
			}
			t.mu.Unlock()
			return nil, err
		}
		t.failed = nil
		t.gen++
		s.gen = t.gen
		t.retire(c, t.cur)
		t.cur = s
	}
}

// retire keeps the last two replaced tickets redacted (a slow response may
// still echo them) and stops redacting older ones. t.mu is held.
func (t *TicketAuth) retire(c *Client, old *ticketSession) {
	if old == nil {
		return
	}
	t.retired = append(t.retired, old)
	for len(t.retired) > 2 {
		o := t.retired[0]
		t.retired = t.retired[1:]
		for _, s := range credentialForms(o) {
			c.Redact.Remove(s)
		}
	}
}

func credentialForms(s *ticketSession) []string {
	return []string{s.ticket, url.QueryEscape(s.ticket), s.csrf}
}

func isLoginRejection(err error) bool {
	var pe *Error
	return errors.Is(err, ErrSecondFactor) || errors.As(err, &pe) && pe.StatusCode == http.StatusUnauthorized
}

// ticketAnswer is the data of POST /access/ticket (schema: username,
// ticket, CSRFPreventionToken, clustername; NeedTFA when a second factor
// is due; cap is not needed).
type ticketAnswer struct {
	Username string `json:"username"`
	Ticket   string `json:"ticket"`
	CSRF     string `json:"CSRFPreventionToken"`
	NeedTFA  Bool   `json:"NeedTFA"`
}

// login obtains a ticket: with renewWith (the current ticket) as the
// password when set, which Proxmox accepts for renewal, falling back to
// the password when that is refused.
func (t *TicketAuth) login(ctx context.Context, c *Client, renewWith string) (*ticketSession, error) {
	pw, kind := t.password, "password"
	if renewWith != "" {
		pw, kind = renewWith, "ticket renewal"
	}
	sent := t.clock()
	var ans ticketAnswer
	err := c.Login(ctx, url.Values{"username": {t.user}, "password": {pw}}, &ans)
	// Register before anything else can see them, the half-authenticated
	// ticket of a second-factor account included.
	for _, s := range []string{ans.Ticket, url.QueryEscape(ans.Ticket), ans.CSRF} {
		c.Redact.Add(s)
	}
	if err != nil {
		var pe *Error
		if renewWith != "" && errors.As(err, &pe) && pe.StatusCode == http.StatusUnauthorized {
			t.log.Info("proxmox ticket renewal refused; logging in with the password", slog.String("user", t.user))
			return t.login(ctx, c, "")
		}
		return nil, err
	}
	// NeedTFA, or a half-authenticated ticket: "!tfa!<challenge>" (PVE 7.2+
	// new format), "tfa!<user>" or "u2f!<user>!…" (old format, PVE 7 with
	// new-format=0).
	if bool(ans.NeedTFA) || strings.HasPrefix(ans.Ticket, "PVE:!tfa!") ||
		strings.HasPrefix(ans.Ticket, "PVE:tfa!") || strings.HasPrefix(ans.Ticket, "PVE:u2f!") {
		return nil, fmt.Errorf("POST %s: %w: Proxmox asks for a second factor to log in as %s, and this client supports only accounts without it", LoginPath, ErrSecondFactor, t.user)
	}
	if ans.Ticket == "" || ans.CSRF == "" {
		return nil, fmt.Errorf("POST %s: malformed response: no ticket or CSRF token", LoginPath)
	}
	t.log.Debug("proxmox login", slog.String("user", t.user), slog.String("kind", kind))
	// pveproxy URI-unescapes the cookie value (create_auth_cookie escapes it).
	cookie := "PVEAuthCookie=" + url.QueryEscape(ans.Ticket)
	return &ticketSession{ticket: ans.Ticket, csrf: ans.CSRF, cookie: cookie, obtained: sent}, nil
}
