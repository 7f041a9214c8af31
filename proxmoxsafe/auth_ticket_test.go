package proxmoxsafe_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const (
	ticketUser = "alice@pve"
	// ticketPassword is the password canary: it must never show up in a
	// result, error, log line or audit record.
	ticketPassword = "PVEPASSWORD-CANARY-3e1f0a77-5d2c"
	tfaUser        = "bob@pve"
)

// ticketCluster is testCluster with a password user and a user with a
// second factor.
func ticketCluster() *proxmoxtest.Cluster {
	c := testCluster()
	c.Users = map[string]*proxmoxtest.User{
		ticketUser: {Password: ticketPassword, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
		tfaUser:    {Password: ticketPassword, SecondFactor: true, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
	}
	return c
}

// ticketEnv starts the fake (setup runs before it starts) and a client
// that logs in as ticketUser with ticketPassword (mod may change that). At
// cleanup it checks that no password, ticket or CSRF token reached the
// logs or the audit log.
func ticketEnv(t *testing.T, setup func(*proxmoxtest.Server), mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	fake := proxmoxtest.NewUnstartedServer(ticketCluster())
	if setup != nil {
		setup(fake)
	}
	fake.StartTLS()
	e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
		c.TokenID, c.TokenSecret = "", ""
		c.Username, c.Password = ticketUser, ticketPassword
		if mod != nil {
			mod(c)
		}
	})
	t.Cleanup(func() {
		assertNoTicketSecret(t, e, "logs", e.logs.String())
		assertNoTicketSecret(t, e, "audit", e.audit.String())
	})
	return e
}

// ticketSecrets are the credentials of a ticket client: the password and
// every ticket (raw and as the cookie carries it) and CSRF token the fake
// saw.
func ticketSecrets(e *env) []string {
	out := []string{ticketPassword}
	for _, r := range e.requests() {
		if c := r.Header.Get("Cookie"); c != "" {
			v := strings.TrimPrefix(c, "PVEAuthCookie=")
			raw, _ := url.QueryUnescape(v)
			out = append(out, v, raw)
		}
		if h := r.Header.Get("CSRFPreventionToken"); h != "" {
			out = append(out, h)
		}
	}
	return out
}

func assertNoTicketSecret(t *testing.T, e *env, where, text string) {
	t.Helper()
	for _, s := range ticketSecrets(e) {
		if strings.Contains(text, s) {
			t.Errorf("%s contain a credential (%.12s…):\n%s", where, s, text)
		}
	}
	if strings.Contains(text, "PVE:!tfa!") || strings.Contains(text, "PVE%3A") {
		t.Errorf("%s contain a ticket:\n%s", where, text)
	}
}

// cookieTicket is the ticket a logged request carried.
func cookieTicket(r proxmoxtest.Request) string {
	v, _ := url.QueryUnescape(strings.TrimPrefix(r.Header.Get("Cookie"), "PVEAuthCookie="))
	return v
}

func isLogin(r proxmoxtest.Request) bool { return r.Method == "POST" && r.Path == "/access/ticket" }

func logins(rs []proxmoxtest.Request) []proxmoxtest.Request {
	var out []proxmoxtest.Request
	for _, r := range rs {
		if isLogin(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestTicketLogin: the first call logs in once with the password; every
// request after it carries the ticket cookie and no token header.
func TestTicketLogin(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, nil, func(c *proxmoxsafe.Config) { c.Username, c.Realm = "alice", "pve" })
	if st := e.client.AuthStatus(); st.Method != proxmoxsafe.AuthTicket || st.Principal != ticketUser || !st.TicketExpiry.IsZero() {
		t.Errorf("AuthStatus before any call = %+v, want ticket for %s, no expiry yet", st, ticketUser)
	}
	if len(e.requests()) != 0 {
		t.Fatal("New sent a request")
	}
	before := time.Now()
	if _, err := e.client.ClusterStatus(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"}); err != nil {
		t.Fatal(err)
	}
	rs := e.requests()
	if got := reqLines(rs); got[0] != "POST /access/ticket" || len(logins(rs)) != 1 || got[len(got)-1] != "GET /nodes/pve1/status" {
		t.Fatalf("requests = %v, want one login first", got)
	}
	if f := rs[0].Form; f.Get("username") != ticketUser || f.Get("password") != ticketPassword || len(f) != 2 {
		t.Errorf("login form has keys %v, want username=%s and the password", slices.Collect(func(yield func(string) bool) {
			for k := range f {
				if !yield(k) {
					return
				}
			}
		}), ticketUser)
	}
	if rs[0].Header.Get("Cookie") != "" || rs[0].Header.Get("Authorization") != "" || rs[0].Header.Get("CSRFPreventionToken") != "" {
		t.Error("the login carried credentials")
	}
	for _, r := range rs[1:] {
		if !strings.HasPrefix(cookieTicket(r), "PVE:"+ticketUser+":") || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: Cookie %q, Authorization %q; want the ticket cookie only", reqLine(r), r.Header.Get("Cookie"), r.Header.Get("Authorization"))
		}
	}
	if n := e.fake.Logins(); n != 1 {
		t.Errorf("logins = %d, want 1", n)
	}
	st := e.client.AuthStatus()
	if st.TicketExpiry.Before(before.Add(proxmoxsafe.DefaultTicketLifetime)) || st.TicketExpiry.After(time.Now().Add(proxmoxsafe.DefaultTicketLifetime)) {
		t.Errorf("TicketExpiry %v is not two hours after the login", st.TicketExpiry)
	}
	if got := st.TicketExpiry.Sub(st.TicketRenewal); got != proxmoxsafe.DefaultTicketLifetime/2 {
		t.Errorf("renewal %v before expiry, want an hour", got)
	}
}

// TestTicketCSRFOnWritesOnly: the CSRF token goes with every write and
// never with a read (checked in the fake's request log), and the fake
// refuses writes without it, so the mutation also proves it was right.
func TestTicketCSRFOnWritesOnly(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, nil, nil)
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, Name: "viaticket"}
	in.Approval = proxmoxsafe.ApprovalPhrase("snapshot", in.Target())
	if _, err := e.client.SnapshotGuest(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	ct := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeLXC, VMID: 200}, Action: proxmoxsafe.ActionShutdown}
	ct.Approval = proxmoxsafe.ApprovalPhrase(string(ct.Action), ct.Target())
	if _, err := e.client.GuestPower(t.Context(), ct); err != nil {
		t.Fatal(err)
	}
	writes := 0
	for _, r := range e.requests() {
		csrf := r.Header.Get("CSRFPreventionToken")
		switch {
		case isLogin(r):
			if csrf != "" {
				t.Errorf("the login carried a CSRF token")
			}
		case r.Method == "GET":
			if csrf != "" {
				t.Errorf("read %s carried the CSRF token", reqLine(r))
			}
		default:
			writes++
			if csrf == "" {
				t.Errorf("write %s without the CSRF token", reqLine(r))
			}
		}
	}
	if writes != 2 {
		t.Errorf("%d writes, want 2 (snapshot, shutdown): %v", writes, reqLines(e.requests()))
	}
	if n := len(logins(e.requests())); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

// TestTicketRenewalBeforeExpiry: with a short lifetime on both sides, the
// client renews the ticket once half of it has passed, with the current
// ticket as the password, and uses the new one from then on.
func TestTicketRenewalBeforeExpiry(t *testing.T) {
	t.Parallel()
	const lifetime = 10 * time.Minute
	e := ticketEnv(t, func(s *proxmoxtest.Server) { s.TicketLifetime = lifetime },
		func(c *proxmoxsafe.Config) { c.TicketLifetime = lifetime })
	var offset atomic.Int64
	proxmoxsafe.SetTicketClock(e.client, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) })

	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	first := cookieTicket(e.requests()[1])
	firstExpiry := e.client.AuthStatus().TicketExpiry

	offset.Store(int64(4 * time.Minute)) // before half-life: no renewal
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(logins(e.requests())); n != 1 {
		t.Fatalf("%d logins before half the lifetime, want 1", n)
	}

	offset.Store(int64(6 * time.Minute)) // past half-life, well before expiry
	e.fake.ResetRequests()
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	rs := e.requests()
	if got := reqLines(rs); !slices.Equal(got, []string{"POST /access/ticket", "GET /version"}) {
		t.Fatalf("requests after half the lifetime = %v, want a renewal then the read", got)
	}
	if pw := rs[0].Form.Get("password"); pw != first {
		t.Errorf("renewal sent password %.20q…, want the current ticket", pw)
	}
	// The new ticket may equal the old one: tickets have one-second
	// timestamps and a deterministic signature, on real PVE too.
	if exp := e.client.AuthStatus().TicketExpiry; !exp.After(firstExpiry) {
		t.Errorf("TicketExpiry %v did not move past %v", exp, firstExpiry)
	}
	if n := e.fake.Logins(); n != 2 {
		t.Errorf("fake issued %d tickets, want 2", n)
	}
}

// TestTicketExpiredUpstreamLogsInAgain: the fake's tickets live three
// seconds and the client does not know it: the read after expiry gets 401, the
// client logs in with the password (the refused ticket cannot renew
// itself) and the read succeeds on the second try.
func TestTicketExpiredUpstreamLogsInAgain(t *testing.T) {
	t.Parallel()
	// The fake's ticket clock stands still except when the test moves it:
	// a ticket expires only then, however long a loaded machine takes for
	// a login and a read (a real-time clock expired a fresh ticket too
	// once they took longer than its lifetime).
	start := time.Now()
	var skew atomic.Int64 // how far the fake's ticket clock is past start
	e := ticketEnv(t, func(s *proxmoxtest.Server) {
		s.TicketLifetime = 3 * time.Second
		s.TicketClock = func() time.Time { return start.Add(time.Duration(skew.Load())) }
	}, nil)
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	// One-second timestamps: four seconds later the ticket is expired
	// whatever the rounding. The fake's clock moves instead of the test
	// sleeping (the client's does not: it cannot know, and must learn it
	// from the 401).
	skew.Store(int64(4100 * time.Millisecond))
	e.fake.ResetRequests()
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatalf("read after expiry: %v", err)
	}
	rs := e.requests()
	if got := reqLines(rs); !slices.Equal(got, []string{"GET /version", "POST /access/ticket", "GET /version"}) {
		t.Fatalf("requests = %v, want the refused read, a login, the read again", got)
	}
	if rs[1].Form.Get("password") != ticketPassword {
		t.Error("the login after a 401 did not use the password")
	}
	if cookieTicket(rs[0]) == cookieTicket(rs[2]) {
		t.Error("the retry sent the refused ticket again")
	}
}

// TestTicketReloginAfterForced401: a 401 (tickets revoked, or a write
// refused) makes the client log in again once and resend the request once;
// a write is resent with the new CSRF token and runs exactly once.
func TestTicketReloginAfterForced401(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, func(s *proxmoxtest.Server) { s.TaskPolls = -1 }, nil)
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.fake.RevokeTickets()
	e.fake.ResetRequests()
	if _, err := e.client.Version(t.Context()); err != nil {
		t.Fatalf("read after revocation: %v", err)
	}
	rs := e.requests()
	if got := reqLines(rs); !slices.Equal(got, []string{"GET /version", "POST /access/ticket", "GET /version"}) {
		t.Fatalf("requests = %v", got)
	}
	if rs[1].Form.Get("password") != ticketPassword || cookieTicket(rs[0]) == cookieTicket(rs[2]) {
		t.Error("the login after the 401 did not use the password, or the retry kept the revoked ticket")
	}

	const path = "/nodes/pve1/qemu/100/snapshot"
	e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: path, Status: 401, Reason: "permission denied - invalid PVE ticket", Times: 1})
	e.fake.ResetRequests()
	in := proxmoxsafe.SnapshotGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, Name: "retried"}
	in.Approval = proxmoxsafe.ApprovalPhrase("snapshot", in.Target())
	rec, err := e.client.SnapshotGuest(t.Context(), in)
	if err != nil {
		t.Fatalf("snapshot after a 401: %v", err)
	}
	if _, err := e.client.TaskState(t.Context(), proxmoxsafe.TaskStateInput{Node: "pve1", UPID: rec.UPID}); err != nil { // ends the task
		t.Fatal(err)
	}
	var posts []proxmoxtest.Request
	for _, r := range e.requests() {
		if r.Method == "POST" {
			posts = append(posts, r)
		}
	}
	if got := reqLines(posts); !slices.Equal(got, []string{"POST " + path, "POST /access/ticket", "POST " + path}) {
		t.Fatalf("POSTs = %v, want the refused write, one login, the write again", got)
	}
	if posts[2].Header.Get("CSRFPreventionToken") == "" {
		t.Error("the resent write has no CSRF token")
	}
	g, _ := e.fake.Guest(100)
	n := 0
	for _, s := range g.Snapshots {
		if s.Name == "retried" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("snapshot created %d times, want 1", n)
	}
}

// TestTicketSecond401FailsClearly: when Proxmox rejects the fresh ticket
// too, the call fails with ErrUnauthorized saying so, after exactly one
// extra login.
func TestTicketSecond401FailsClearly(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, func(s *proxmoxtest.Server) {
		s.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/version", Status: 401, Reason: "permission denied - invalid PVE ticket", Times: 2})
	}, nil)
	_, err := e.client.Version(t.Context())
	if !errors.Is(err, proxmoxsafe.ErrUnauthorized) || !strings.Contains(err.Error(), "even right after logging in again") {
		t.Fatalf("err = %v, want ErrUnauthorized saying the fresh ticket was rejected too", err)
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"POST /access/ticket", "GET /version", "POST /access/ticket", "GET /version"}) {
		t.Errorf("requests = %v, want login, read, one more login, read", got)
	}
	assertNoTicketSecret(t, e, "error", err.Error())
}

// TestTicketWrongPassword: a refused login is ErrUnauthorized naming the
// login, and is not retried with the password for a while (account
// lockout).
func TestTicketWrongPassword(t *testing.T) {
	t.Parallel()
	const wrong = "WRONGPASSWORD-CANARY-88a1"
	e := ticketEnv(t, nil, func(c *proxmoxsafe.Config) { c.Password = wrong })
	for range 3 {
		_, err := e.client.Version(t.Context())
		if !errors.Is(err, proxmoxsafe.ErrUnauthorized) || !strings.Contains(err.Error(), "login was refused") {
			t.Fatalf("err = %v, want ErrUnauthorized about the login", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Fatalf("the error shows the password: %v", err)
		}
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"POST /access/ticket"}) {
		t.Errorf("requests = %v, want one login and nothing else", got)
	}
	if strings.Contains(e.logs.String(), wrong) {
		t.Error("logs show the password")
	}
}

// TestTicketSecondFactorRefused: an account with TFA gets a clear refusal
// and nothing but the login is sent; the half-authenticated ticket is never
// used or shown.
func TestTicketSecondFactorRefused(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, nil, func(c *proxmoxsafe.Config) { c.Username = tfaUser })
	for range 2 {
		_, err := e.client.Version(t.Context())
		if !errors.Is(err, proxmoxsafe.ErrUnauthorized) || !strings.Contains(err.Error(), "second factor") || !strings.Contains(err.Error(), "API token") {
			t.Fatalf("err = %v, want ErrUnauthorized explaining the second factor and pointing to API tokens", err)
		}
		assertNoTicketSecret(t, e, "error", err.Error())
	}
	if got := reqLines(e.requests()); !slices.Equal(got, []string{"POST /access/ticket"}) {
		t.Errorf("requests = %v, want the login only", got)
	}
}

// TestTicketOneLoginUnderConcurrency: 50 parallel calls share one login:
// on a fresh client, when the ticket is due for renewal (the others keep
// using the current ticket), and when it is too old to use.
func TestTicketOneLoginUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := ticketEnv(t, nil, nil)
	var offset atomic.Int64
	proxmoxsafe.SetTicketClock(e.client, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) })
	burst := func(phase string) {
		t.Helper()
		// Slow logins make every call arrive while one is in flight.
		e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/access/ticket", Latency: 200 * time.Millisecond, Times: 1})
		e.fake.ResetRequests()
		start := make(chan struct{})
		errs := make(chan error, 50)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				<-start
				_, err := e.client.Version(t.Context())
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("%s: %v", phase, err)
			}
		}
		if n := len(logins(e.requests())); n != 1 {
			t.Errorf("%s: %d logins for 50 parallel calls, want 1", phase, n)
		}
	}
	burst("fresh client")
	offset.Store(int64(61 * time.Minute))
	burst("renewal due")
	if pw := logins(e.requests())[0].Form.Get("password"); pw == ticketPassword {
		t.Error("renewal due: logged in with the password instead of renewing the ticket")
	}
	offset.Store(int64(61*time.Minute + 110*time.Minute))
	burst("ticket too old to use")
	if pw := logins(e.requests())[0].Form.Get("password"); pw != ticketPassword {
		t.Error("ticket too old: did not log in with the password")
	}
}

// TestTicketCredentialsNeverLeak is the canary test for ticket
// authentication: upstream echoes of the cookie and CSRF header, and an
// answer that repeats the password, the ticket and the CSRF token in
// plain text, reach no result, error, log line or audit record.
func TestTicketCredentialsNeverLeak(t *testing.T) {
	t.Parallel()
	const upid = "UPID:pve1:00001234:00005678:65000000:qmstart:100:alice@pve:"
	cases := []struct {
		name  string
		fault func(e *env) proxmoxtest.Fault
		call  func(e *env) (any, error)
	}{
		{"reason phrase on a read", func(*env) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/status", Status: 502, Reason: "proxy saw {{auth}}", Body: []byte(`{"data":null}`), Echo: true}
		}, func(e *env) (any, error) {
			return e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
		}},
		{"message and errors on a write", func(*env) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/qemu/100/status/shutdown", Status: 500, Echo: true}
		}, func(e *env) (any, error) {
			return e.client.GuestPower(t.Context(), approvedShutdown100())
		}},
		{"credentials in plain text in a task log", func(e *env) proxmoxtest.Fault {
			var vals []string
			for _, s := range ticketSecrets(e) {
				vals = append(vals, s)
			}
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Status: 200,
				Body: []byte(`{"data":[{"n":1,"t":"seen: ` + strings.Join(vals, " ") + `"}],"total":1}`)}
		}, func(e *env) (any, error) {
			return e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: upid})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ticketEnv(t, nil, nil)
			// Log in first, so the fault sees (and can repeat) real credentials.
			if _, err := e.client.Version(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := e.client.ClusterStatus(t.Context()); err != nil {
				t.Fatal(err)
			}
			e.fake.InjectFault(tc.fault(e))
			res, err := tc.call(e)
			seen := strings.TrimSpace(sprint(res))
			if err != nil {
				seen += " " + err.Error()
			}
			assertNoTicketSecret(t, e, "result and error", seen)
			if !strings.Contains(seen, "[redacted]") {
				t.Errorf("the credentials did not reach the caller redacted (the test does not exercise the path):\n%s", seen)
			}
		})
	}
}

// TestTicketRefusalsSendNothing: with a password login, a refused input or
// policy sends no request at all (the login is lazy), and a refusal from
// the guest's state sends no mutating one (the login is not one).
func TestTicketRefusalsSendNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   proxmoxsafe.GuestPowerInput
		none bool // no request at all
	}{
		{"invalid vmid", powerIn("pve1", proxmoxsafe.TypeQEMU, 5, proxmoxsafe.ActionStop), true},
		{"node not allowed", powerIn("pve3", proxmoxsafe.TypeQEMU, 300, proxmoxsafe.ActionStop), true},
		{"protected guest", powerIn("pve1", proxmoxsafe.TypeQEMU, 106, proxmoxsafe.ActionStop), true},
		{"wrong approval", proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, Action: proxmoxsafe.ActionStop, Controls: proxmoxsafe.Controls{Approval: "yes"}}, false},
		{"template", powerIn("pve1", proxmoxsafe.TypeQEMU, 103, proxmoxsafe.ActionStart), false},
		{"locked", powerIn("pve1", proxmoxsafe.TypeQEMU, 104, proxmoxsafe.ActionShutdown), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := ticketEnv(t, nil, nil)
			_, err := e.client.GuestPower(t.Context(), tc.in)
			if err == nil || !strings.Contains(err.Error(), "no action was taken") {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if m := e.fake.MutatingRequests(); len(m) != 0 {
				t.Errorf("mutating requests after a refusal: %v", reqLines(m))
			}
			if r := e.requests(); tc.none && len(r) != 0 {
				t.Errorf("requests after a refusal: %v, want none (not even the login)", reqLines(r))
			}
			assertNoTicketSecret(t, e, "error", err.Error())
		})
	}
}
