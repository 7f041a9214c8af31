package proxmoxtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testUser     = "alice@pve"
	testPassword = "correct horse battery"
	tfaUser      = "bob@pve"
)

// newTicketServer starts a server with a password user, a second-factor
// user and a read-only user; version selects the 401 wording.
func newTicketServer(t *testing.T, version string, lifetime time.Duration) *Server {
	t.Helper()
	c := DemoCluster()
	c.Version = version
	c.Users = map[string]*User{
		testUser: {Password: testPassword, Privileges: map[string][]string{"/": AllPrivileges()}},
		tfaUser:  {Password: testPassword, SecondFactor: true, Privileges: map[string][]string{"/": AllPrivileges()}},
		"ro@pve": {Password: testPassword, Privileges: map[string][]string{"/vms": {"VM.Audit"}}},
	}
	s := NewUnstartedServer(c)
	s.TicketLifetime = lifetime
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// ticketCall sends a request with a ticket cookie and, when csrf is not
// empty, the CSRF header.
func ticketCall(t *testing.T, s *Server, method, path string, form url.Values, ticket, csrf string) answer {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+"/api2/json"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if ticket != "" {
		req.Header.Set("Cookie", "PVEAuthCookie="+url.QueryEscape(ticket))
	}
	if csrf != "" {
		req.Header.Set("CSRFPreventionToken", csrf)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, status: resp.Status, header: resp.Header, raw: raw}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("%s %s: body %q: %v", method, path, raw, err)
	}
	return a
}

func login(t *testing.T, s *Server, form url.Values) answer {
	t.Helper()
	return ticketCall(t, s, http.MethodPost, "/access/ticket", form, "", "")
}

func loginData(t *testing.T, s *Server, user, password string) (ticket, csrf string) {
	t.Helper()
	a := login(t, s, url.Values{"username": {user}, "password": {password}})
	if a.code != http.StatusOK {
		t.Fatalf("login %s: %s", user, a.status)
	}
	d := a.body["data"].(map[string]any)
	return d["ticket"].(string), d["CSRFPreventionToken"].(string)
}

// TestTicketLoginShapes checks POST /access/ticket against the PVE 9.1
// schema and the pve6 recording (fog-proxmox cassette, see
// shared/pve-api/SOURCE.md): the answer's keys, the ticket and CSRF token
// formats, and the 401 for wrong credentials.
func TestTicketLoginShapes(t *testing.T) {
	t.Parallel()
	s := newTicketServer(t, "9.1.1", 0)

	a := login(t, s, url.Values{"username": {"alice"}, "realm": {"pve"}, "password": {testPassword}})
	if a.code != http.StatusOK {
		t.Fatalf("login with realm: %s %s", a.status, a.raw)
	}
	d := a.body["data"].(map[string]any)
	if d["username"] != testUser {
		t.Errorf("username = %v, want %s", d["username"], testUser)
	}
	if ticket, _ := d["ticket"].(string); !regexp.MustCompile(`^PVE:alice@pve:[0-9A-F]{8}::[A-Za-z0-9+/]+=*$`).MatchString(ticket) {
		t.Errorf("ticket %q does not look like PVE:<user>:<hex>::<base64>", ticket)
	}
	if csrf, _ := d["CSRFPreventionToken"].(string); !regexp.MustCompile(`^[0-9A-F]{8}:[A-Za-z0-9+/]{43}$`).MatchString(csrf) {
		t.Errorf("CSRF token %q does not look like <hex>:<base64 HMAC-SHA256>", csrf)
	}
	caps, _ := d["cap"].(map[string]any)
	if vms, _ := caps["vms"].(map[string]any); vms["VM.PowerMgmt"] != 1.0 {
		t.Errorf("cap.vms = %v, want VM.PowerMgmt: 1", caps["vms"])
	}
	if d["clustername"] != "demo" {
		t.Errorf("clustername = %v, want demo (the user holds Sys.Audit on /)", d["clustername"])
	}
	if _, ok := d["NeedTFA"]; ok {
		t.Error("NeedTFA on a full login")
	}
	ro := login(t, s, url.Values{"username": {"ro@pve"}, "password": {testPassword}}).body["data"].(map[string]any)
	if _, ok := ro["clustername"]; ok {
		t.Error("clustername shown to a user without Sys.Audit on /")
	}

	for name, form := range map[string]url.Values{
		"wrong password": {"username": {testUser}, "password": {"wrong password"}},
		"unknown user":   {"username": {"mallory@pve"}, "password": {testPassword}},
		"realm twice":    {"username": {testUser}, "realm": {"pve"}, "password": {testPassword}},
		"tfa challenge":  {"username": {tfaUser}, "password": {"totp:123456"}, "tfa-challenge": {"PVE:!tfa!x:00000000::c2ln"}},
	} {
		a := login(t, s, form)
		if a.status != "401 authentication failure" || string(a.raw) != `{"data":null,"message":"authentication failure\n"}` {
			t.Errorf("%s: %s %s, want 401 authentication failure with {\"data\":null,...}", name, a.status, a.raw)
		}
	}
	if a := login(t, s, url.Values{"password": {testPassword}}); a.code != http.StatusBadRequest || !strings.Contains(string(a.raw), `"username":"property is missing and it is not optional"`) {
		t.Errorf("missing username: %s %s", a.status, a.raw)
	}
	if a := login(t, s, url.Values{"username": {"alice"}, "realm": {"1bad"}, "password": {testPassword}}); a.code != http.StatusBadRequest {
		t.Errorf("bad realm: %s %s", a.status, a.raw)
	}
	// GET is the schema's dummy: null data, no credentials needed.
	if a := ticketCall(t, s, http.MethodGet, "/access/ticket", nil, "", ""); a.code != http.StatusOK || string(a.raw) != `{"data":null}` {
		t.Errorf("GET /access/ticket: %s %s", a.status, a.raw)
	}
}

// TestTicketUseAndCSRF: the cookie opens reads; writes need the CSRF token,
// and without (or with a wrong) one are refused with 401 and the reason
// phrase of the version.
func TestTicketUseAndCSRF(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, csrfReason, ticketReason string }{
		{"9.1.1", "Permission denied - invalid csrf token", "permission denied - invalid PVE ticket"},
		{"9.1.5", "Authentication failed!", "Authentication failed!"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			s := newTicketServer(t, tc.version, 0)
			ticket, csrf := loginData(t, s, testUser, testPassword)
			if a := ticketCall(t, s, http.MethodGet, "/nodes/pve1/status", nil, ticket, ""); a.code != http.StatusOK {
				t.Fatalf("GET with ticket: %s", a.status)
			}
			snap := url.Values{"snapname": {"viaticket"}}
			for name, h := range map[string]string{"no CSRF header": "", "wrong CSRF token": "00000000:AAAA", "another user's": s.csrfToken("ro@pve", time.Now().Unix())} {
				if a := ticketCall(t, s, http.MethodPost, "/nodes/pve1/qemu/100/snapshot", snap, ticket, h); a.status != "401 "+tc.csrfReason {
					t.Errorf("%s: %s, want 401 %s", name, a.status, tc.csrfReason)
				}
			}
			s.mu.RLock()
			tasks := len(s.tasks)
			s.mu.RUnlock()
			if tasks != 0 {
				t.Fatal("a write without a valid CSRF token started a task")
			}
			if a := ticketCall(t, s, http.MethodPost, "/nodes/pve1/qemu/100/snapshot", snap, ticket, csrf); a.code != http.StatusOK {
				t.Errorf("POST with ticket and CSRF token: %s %s", a.status, a.raw)
			}
			for name, tk := range map[string]string{"forged": "PVE:alice@pve:00000000::AAAA", "garbage": "x"} {
				if a := ticketCall(t, s, http.MethodGet, "/version", nil, tk, ""); a.status != "401 "+tc.ticketReason {
					t.Errorf("%s ticket: %s, want 401 %s", name, a.status, tc.ticketReason)
				}
			}
			s.RevokeTickets()
			if a := ticketCall(t, s, http.MethodGet, "/version", nil, ticket, ""); a.status != "401 "+tc.ticketReason {
				t.Errorf("revoked ticket: %s, want 401 %s", a.status, tc.ticketReason)
			}
		})
	}
}

// TestTicketRenewalAndExpiry: the current ticket is accepted as the
// password for a new one; an expired ticket opens nothing and renews
// nothing.
func TestTicketRenewalAndExpiry(t *testing.T) {
	t.Parallel()
	s := newTicketServer(t, "9.1.1", time.Minute)
	var clock atomic.Int64 // seconds added to the real time
	s.TicketClock = func() time.Time { return time.Now().Add(time.Duration(clock.Load()) * time.Second) }
	ticket, _ := loginData(t, s, testUser, testPassword)
	renewed, _ := loginData(t, s, testUser, ticket)
	if renewed == "" {
		t.Fatal("no renewed ticket")
	}
	if a := login(t, s, url.Values{"username": {"ro@pve"}, "password": {ticket}}); a.code != http.StatusUnauthorized {
		t.Errorf("another user's ticket as password: %s, want 401", a.status)
	}
	if got := s.Logins(); got != 2 {
		t.Errorf("Logins = %d, want 2", got)
	}
	// The fake's clock moves past the one-minute lifetime instead of the
	// test sleeping: a real short lifetime flaked when a loaded machine
	// took longer than it for the two logins above.
	clock.Add(120)
	if a := ticketCall(t, s, http.MethodGet, "/version", nil, renewed, ""); a.status != "401 permission denied - invalid PVE ticket" {
		t.Errorf("expired ticket: %s", a.status)
	}
	if a := login(t, s, url.Values{"username": {testUser}, "password": {renewed}}); a.status != "401 authentication failure" {
		t.Errorf("renewal with an expired ticket: %s", a.status)
	}
}

// TestTicketSecondFactor: the right password of a TFA account gets only a
// half-authenticated ticket ("PVE:!tfa!…", NeedTFA 1, no cap), which opens
// nothing and cannot be renewed.
func TestTicketSecondFactor(t *testing.T) {
	t.Parallel()
	s := newTicketServer(t, "9.1.1", 0)
	a := login(t, s, url.Values{"username": {tfaUser}, "password": {testPassword}})
	if a.code != http.StatusOK {
		t.Fatalf("TFA login: %s", a.status)
	}
	d := a.body["data"].(map[string]any)
	ticket, _ := d["ticket"].(string)
	if !strings.HasPrefix(ticket, "PVE:!tfa!") || d["NeedTFA"] != 1.0 {
		t.Errorf("TFA answer = %v, want a PVE:!tfa! ticket and NeedTFA 1", d)
	}
	if _, ok := d["cap"]; ok {
		t.Error("cap on a half-authenticated login")
	}
	if a := ticketCall(t, s, http.MethodGet, "/version", nil, ticket, ""); a.code != http.StatusUnauthorized {
		t.Errorf("half-authenticated ticket opened /version: %s", a.status)
	}
	if a := login(t, s, url.Values{"username": {tfaUser}, "password": {ticket}}); a.code != http.StatusUnauthorized {
		t.Errorf("half-authenticated ticket renewed: %s", a.status)
	}
	if s.Logins() != 0 {
		t.Errorf("Logins = %d, want 0", s.Logins())
	}
}

// TestTicketLoginIsNotMutating: MutatingRequests leaves the login out, so
// refusal tests can use ticket authentication.
func TestTicketLoginIsNotMutating(t *testing.T) {
	t.Parallel()
	s := newTicketServer(t, "9.1.1", 0)
	loginData(t, s, testUser, testPassword)
	if m := s.MutatingRequests(); len(m) != 0 {
		t.Errorf("MutatingRequests = %v, want none", m)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Form.Get("username") != testUser {
		t.Errorf("request log = %v, want the login with its form", r)
	}
}
