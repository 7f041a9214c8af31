package approvalweb

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"log/slog"
	"net/http"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "proxmox_safe_approval"

// MaxFailedLogins is how many failed logins the page accepts in a minute,
// from all clients together; beyond it every login, right or wrong, is
// refused with 429 until the minute has passed. A per-client limit would
// not hold behind a proxy (one address) or against many addresses, and the
// secret is long enough that this only slows a guesser down further.
const MaxFailedLogins = 5

// maxSessions bounds the sessions kept; the oldest goes first.
const maxSessions = 32

// session is one login.
type session struct {
	expires time.Time
	csrf    string // per-session token every state-changing form carries
}

// randomToken returns 32 random bytes, base64url.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// sessionFrom returns the caller's live session, or nil.
func (h *Handler) sessionFrom(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	key := sha256.Sum256([]byte(c.Value)) // map lookups by a digest, not by the secret value
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[key]
	if s == nil {
		return nil
	}
	if !h.now().Before(s.expires) {
		delete(h.sessions, key)
		return nil
	}
	return s
}

// checkCSRF reports whether the form carries the session's CSRF token.
func checkCSRF(r *http.Request, s *session) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

// serveLogin checks the operator secret and starts a session.
func (h *Handler) serveLogin(w http.ResponseWriter, r *http.Request) {
	now := h.now()
	if !h.reserveLoginAttempt(now) {
		w.Header().Set("Retry-After", "60")
		h.fail(w, r, http.StatusTooManyRequests, "too many failed logins: wait a minute before trying again", nil)
		return
	}
	given := sha256.Sum256([]byte(r.PostFormValue("secret")))
	if subtle.ConstantTimeCompare(given[:], h.secret[:]) != 1 {
		h.log.Warn("approval page login failed", slog.String("remote", r.RemoteAddr))
		h.render(w, http.StatusUnauthorized, "login", pageData{Title: "Log in", Message: "Wrong operator secret."})
		return
	}
	id := randomToken()
	s := &session{expires: now.Add(h.ttl), csrf: randomToken()}
	h.mu.Lock()
	h.releaseLoginAttemptLocked(now)
	h.pruneLocked(now)
	h.sessions[sha256.Sum256([]byte(id))] = s
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: h.path, MaxAge: int(h.ttl / time.Second),
		HttpOnly: true, Secure: h.secure || r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	h.log.Info("approval page login", slog.String("operator", h.operator), slog.String("remote", r.RemoteAddr))
	http.Redirect(w, r, h.path, http.StatusSeeOther)
}

// serveLogout ends the session (CSRF-checked: a forced logout is a
// nuisance, not a risk, but every state-changing form is checked alike).
func (h *Handler) serveLogout(w http.ResponseWriter, r *http.Request) {
	s := h.sessionFrom(r)
	if s == nil {
		h.fail(w, r, http.StatusUnauthorized, "not logged in", nil)
		return
	}
	if !checkCSRF(r, s) {
		h.fail(w, r, http.StatusForbidden, "the form's CSRF token is missing or wrong; nothing was changed", s)
		return
	}
	c, _ := r.Cookie(cookieName)
	h.mu.Lock()
	delete(h.sessions, sha256.Sum256([]byte(c.Value)))
	h.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: h.path, MaxAge: -1,
		HttpOnly: true, Secure: h.secure || r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, h.path, http.StatusSeeOther)
}

// reserveLoginAttempt counts an attempt as failed before its secret is
// compared, and reports whether fewer than MaxFailedLogins failed in the
// last minute (else it counts nothing). Counting first closes the window
// in which many concurrent guesses all pass the check before any of them
// is counted; a login that succeeds takes its count back
// (releaseLoginAttemptLocked).
func (h *Handler) reserveLoginAttempt(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.failures[:0]
	for _, t := range h.failures {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	h.failures = kept
	if len(h.failures) >= MaxFailedLogins {
		return false
	}
	h.failures = append(h.failures, now)
	return true
}

// releaseLoginAttemptLocked takes back the count of a login that succeeded.
func (h *Handler) releaseLoginAttemptLocked(now time.Time) {
	for i := len(h.failures) - 1; i >= 0; i-- {
		if h.failures[i].Equal(now) {
			h.failures = append(h.failures[:i], h.failures[i+1:]...)
			return
		}
	}
}

// pruneLocked drops expired sessions and, at the cap, the oldest one.
func (h *Handler) pruneLocked(now time.Time) {
	var oldest [sha256.Size]byte
	var oldestExp time.Time
	for k, s := range h.sessions {
		if !now.Before(s.expires) {
			delete(h.sessions, k)
			continue
		}
		if oldestExp.IsZero() || s.expires.Before(oldestExp) {
			oldest, oldestExp = k, s.expires
		}
	}
	if len(h.sessions) >= maxSessions {
		delete(h.sessions, oldest)
	}
}
