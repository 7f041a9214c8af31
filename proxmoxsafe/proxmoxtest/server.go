package proxmoxtest

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake Proxmox VE API server on a loopback address.
type Server struct {
	// URL is the base URL, without a trailing slash and without /api2/json,
	// e.g. "https://127.0.0.1:41234". Set by Start/StartTLS.
	URL string

	// The options below may be changed after NewUnstartedServer and before
	// Start or StartTLS.

	// TaskPolls is how many status polls a task answers "running" before it
	// stops. 0 means the default, 1; -1 means "stopped" on the first poll.
	TaskPolls int
	// HADelayPolls is, for HA-managed guests, how many status/current reads
	// still show the old state after an hastart/hastop request (the ha task
	// itself stops OK at once, like the real one that only asks the HA
	// manager). 0 means the default, 2; -1 means the change is immediate.
	HADelayPolls int
	// HADelay, when positive, carries an HA-managed guest's start or stop
	// out this long after the request, whatever is read meanwhile (the
	// LRM acts on its own schedule, as on a real cluster); HADelayPolls is
	// then not used. Interactive demos set it.
	HADelay time.Duration
	// AuthDelay delays every 401 answer (real PVE: 3s). Default 0.
	AuthDelay time.Duration
	// Latency delays every request by this much before it is served (a
	// network round trip and Proxmox's own work: the fake otherwise
	// answers in microseconds, so reads sent at once could not be told
	// from reads sent one after another). It comes on top of a fault's
	// own Latency. A client that goes away meanwhile gets no answer; the
	// request is still carried out, as with [Fault.Latency]. See
	// [SequentialDepth] for counting round trips with it. Default 0.
	Latency time.Duration
	// RequestLogLimit, when positive, keeps only the most recent this
	// many requests in the log ([Server.Requests]), so a long-running
	// server (a demo) does not grow with every request. Zero keeps every
	// request, which is what tests that count requests need.
	RequestLogLimit int
	// TaskDuration, when positive, also stops every task once it has run
	// this long (checked at each request), as real tasks end whether or
	// not anyone polls them. Interactive demos set it; tests that count
	// polls leave it zero. A task ends this long after it started, to the
	// nanosecond (not from the UPID's start time, which is in seconds).
	TaskDuration time.Duration
	// AgentTimeout is how long agent/ping of a guest whose agent hangs
	// ([Guest.AgentHung]) waits before failing; 0 means 3 s, qemu-server's
	// guest-ping timeout. The wait holds no lock, and ends early when the
	// client gives up or the server closes.
	AgentTimeout time.Duration
	// TicketLifetime is how long login tickets and CSRF tokens stay valid;
	// zero means [DefaultTicketLifetime] (2 hours, as on real PVE). Tests
	// of renewal and expiry set it short. Resolution is one second (the
	// ticket's timestamp).
	TicketLifetime time.Duration
	// TicketClock, when set, replaces time.Now for issuing and checking
	// tickets and CSRF tokens, so that a test of expiry moves the clock
	// instead of sleeping past TicketLifetime (and does not flake when a
	// loaded machine makes two logins take longer than a short lifetime).
	// nil means time.Now.
	TicketClock func() time.Time

	ts *httptest.Server
	// id is the TLS identity; tls holds the handshake faults (faults_tls.go).
	id  atomic.Pointer[identity]
	tls tlsFaults

	// mu guards the model, the tasks and the HA bookkeeping; reads that
	// change state (task polls, HA countdowns) take it for writing.
	mu         sync.RWMutex
	cluster    *Cluster
	tasks      []*task
	taskByUPID map[string]*task
	outcomes   []string
	nextPID    uint64
	pstartBase uint64
	started    time.Time
	haPending  map[int]*haPending
	ticketKey  []byte // signs tickets and CSRF tokens; RevokeTickets replaces it
	logins     int    // full tickets issued

	reqMu    sync.Mutex
	requests []Request
	reqSeq   uint64

	faultMu sync.Mutex
	faults  []*Fault

	// wg counts running handlers: httptest stops tracking a connection once
	// it is hijacked, and our error answers hijack, so Close waits here too.
	wg        sync.WaitGroup
	closing   chan struct{}
	closeOnce sync.Once
}

// NewServer starts a fake PVE server with TLS (a fresh self-signed
// certificate for 127.0.0.1, ::1 and localhost), like a real PVE node.
// A nil cluster means [DemoCluster].
func NewServer(c *Cluster) *Server {
	s := NewUnstartedServer(c)
	s.StartTLS()
	return s
}

// NewUnstartedServer returns a server that is not started yet, so options can
// be set; call Start or StartTLS. The server takes ownership of c (nil means
// [DemoCluster]) and fills its documented defaults.
func NewUnstartedServer(c *Cluster) *Server {
	if c == nil {
		c = DemoCluster()
	}
	c.normalize()
	s := &Server{
		cluster:    c,
		taskByUPID: map[string]*task{},
		haPending:  map[int]*haPending{},
		nextPID:    0x1F40,
		pstartBase: 0x00D071,
		started:    time.Now(),
		ticketKey:  newKey(),
		closing:    make(chan struct{}),
	}
	s.id.Store(newIdentity())
	s.ts = httptest.NewUnstartedServer(s)
	// TLS handshake failures are expected in pinning tests; keep them quiet.
	s.ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	return s
}

// Start starts the server with plain HTTP (for tests of http:// handling).
func (s *Server) Start() {
	s.ts.Start()
	s.URL = s.ts.URL
}

// StartTLS starts the server with TLS (HTTP/1.1 only, like pveproxy).
func (s *Server) StartTLS() {
	s.ts.TLS = &tls.Config{
		Certificates:       []tls.Certificate{s.id.Load().cert},
		GetConfigForClient: s.handshake,
	}
	s.ts.StartTLS()
	s.URL = s.ts.URL
}

// Close shuts the server down and blocks until all in-flight requests,
// including delayed ones, have finished.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.ts.Close()
	s.wg.Wait()
}

// Certificate returns the server's current self-signed leaf certificate
// (see [Server.RotateCertificate]).
func (s *Server) Certificate() *x509.Certificate { return s.id.Load().leaf }

// CertificatePEM returns the certificate in PEM form, as a CA file.
func (s *Server) CertificatePEM() []byte { return append([]byte(nil), s.id.Load().pem...) }

// Fingerprint returns the SHA-256 fingerprint of the leaf certificate as
// `pvenode cert info` shows it: upper-case hex pairs joined with ':'.
func (s *Server) Fingerprint() string {
	sum := sha256.Sum256(s.id.Load().leaf.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	parts := make([]string, 0, len(sum))
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

// Client returns an HTTP client that trusts the server's first certificate
// (not one installed later by [Server.RotateCertificate]). It is closed
// with the server.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Update runs fn with the model under the write lock.
func (s *Server) Update(fn func(c *Cluster)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.cluster)
}

// View runs fn with the model under the read lock; fn must not change it.
func (s *Server) View(fn func(c *Cluster)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn(s.cluster)
}

// Guest returns a copy of the guest with that vmid.
func (s *Server) Guest(vmid int) (Guest, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.cluster.guest(vmid)
	if g == nil {
		return Guest{}, false
	}
	return g.clone(), true
}

// AddToken adds or replaces an API token.
func (s *Server) AddToken(id string, t *Token) {
	s.Update(func(c *Cluster) { c.Tokens[id] = t })
}

// SetNodeOnline marks a node online or offline; requests proxied to an
// offline node fail with 595 "No route to host".
func (s *Server) SetNodeOnline(name string, online bool) {
	s.Update(func(c *Cluster) {
		if n := c.node(name); n != nil {
			n.Online = online
		}
	})
}

// sleep waits d; it reports false when the client went away or the
// server closed first (see [Server.abandon]).
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// hold waits until c is closed (nil: not at all); it reports false when
// the client went away or the server closed first.
func (s *Server) hold(r *http.Request, c <-chan struct{}) bool {
	if c == nil {
		return true
	}
	select {
	case <-c:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// abandon ends a delayed request without answering it: its client gave
// up (or the server closes), and a slow server would not have answered by
// then either. What the request asked for may still have been carried
// out, as Proxmox's worker carries out a request whose client left.
// Answering the moment the client gives up would race the client's own
// timeout: net/http's transport sends TLS close_notify before it closes
// the socket, and an answer arriving in between is returned as a success
// (a "slow headers" fault then turned into a normal answer under load,
// now and then). net/http drops the connection and logs nothing for
// [http.ErrAbortHandler].
func (s *Server) abandon() { panic(http.ErrAbortHandler) }
