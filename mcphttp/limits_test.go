package mcphttp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// slowBody opens a raw connection, sends headers announcing a body of 200
// bytes and only 10 of them, then reads what the server does. It returns
// the status line ("" if none) once the server closed the connection. The
// read deadline only bounds a hung test: the server must act long before.
func slowBody(t *testing.T, f *fixture, token string) string {
	t.Helper()
	return slowBodyPath(t, f, "/mcp", token)
}

func slowBodyPath(t *testing.T, f *fixture, path, token string) string {
	t.Helper()
	conn, err := net.Dial("tcp", f.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hdr := "POST " + path + " HTTP/1.1\r\nHost: " + f.ts.Listener.Addr().String() +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n"
	if token != "" {
		hdr += "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := io.WriteString(conn, hdr+"\r\n"+`{"jsonrpc"`); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(conn)
	status, _ := br.ReadString('\n')
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Errorf("the server did not close the slow connection: %v", err)
	}
	return strings.TrimSpace(status)
}

// TestSlowBodyClosed: a client that trickles its body is answered 408 and
// disconnected after BodyReadTimeout, with or without a valid token.
func TestSlowBodyClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{BodyReadTimeout: 300 * time.Millisecond}})
	if got := slowBody(t, f, aliceTok); !strings.Contains(got, "408") {
		t.Errorf("authenticated slow body: status line %q, want 408", got)
	}
	// Unauthenticated: 401 at once; the connection must not stay open
	// while net/http waits for the rest of the body.
	if got := slowBody(t, f, ""); !strings.Contains(got, "401") {
		t.Errorf("unauthenticated slow body: status line %q, want 401", got)
	}
	if !strings.Contains(f.logs.String(), "request body not received within") {
		t.Errorf("no log line for the timeout:\n%s", f.logs.String())
	}
	// A normal client still works, and a long call is not cut by the body
	// deadline (the connection's deadline is cleared once the body is in).
	cs := f.connect(t, aliceTok, "2025-11-25")
	time.Sleep(500 * time.Millisecond) // longer than BodyReadTimeout on an idle keep-alive connection
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "cluster_status", Arguments: map[string]any{}}); err != nil {
		t.Errorf("cluster_status after the deadline would have passed: %v", err)
	}
}

// TestSessionCapPerIdentity: an identity at its session cap gets 429 with a
// clear message; another identity is not affected; closing a session frees
// its place.
func TestSessionCapPerIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{MaxSessionsPerIdentity: 2}})
	a1 := f.connect(t, aliceTok, "2025-11-25")
	f.connect(t, aliceTok, "2025-11-25")
	if _, err := f.tryConnect(t, aliceTok, "2025-11-25"); err == nil {
		t.Fatal("a third session for alice was opened; want the cap of 2 to refuse it")
	}
	r := f.do(t, http.MethodPost, f.url, initBody, auth(aliceTok))
	_, _, msg := rpcError(t, r)
	if r.status != http.StatusTooManyRequests || !strings.Contains(msg, "too many open sessions") || !strings.Contains(msg, "limit 2") {
		t.Errorf("third session: %d %q, want 429 naming the limit", r.status, msg)
	}
	f.connect(t, bobTok, "2025-11-25") // bob has his own allowance
	if err := a1.Close(); err != nil { // DELETE ends the session
		t.Fatal(err)
	}
	cs, err := f.tryConnect(t, aliceTok, "2025-11-25")
	if err != nil {
		t.Fatalf("after closing a session, alice could not open one: %v", err)
	}
	cs.Close()
}

// TestInFlightBound: beyond MaxInFlight concurrent requests the server
// answers 503 with Retry-After at once instead of queueing; once the
// running call ends, requests are served again.
func TestInFlightBound(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	block := func(s *mcp.Server) {
		mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "test only"},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				close(entered)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
			})
	}
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{MaxInFlight: 1}, extra: block})
	// With a bound of one, the client's notification right after
	// initialize may meet the initialize handler still finishing: a 503
	// that a client retries. Retry here too.
	var cs *mcp.ClientSession
	for i := 0; cs == nil; i++ {
		c, err := f.tryConnect(t, aliceTok, "2025-11-25")
		switch {
		case err == nil:
			cs = c
			t.Cleanup(func() { cs.Close() })
		case i == 50:
			t.Fatalf("connect: %v", err)
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		done <- err
	}()
	<-entered
	sess := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}
	r := f.do(t, http.MethodPost, f.url, pingBody, merge(auth(aliceTok), sess))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "in flight") {
		t.Errorf("second request while one is in flight: %d %q Retry-After %q, want 503", r.status, r.body, r.header.Get("Retry-After"))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("blocked call: %v", err)
	}
	for i := 0; ; i++ { // the blocked call's handler may still be finishing
		r := f.do(t, http.MethodPost, f.url, pingBody, merge(auth(aliceTok), sess))
		if r.status == http.StatusOK {
			break
		}
		if r.status != http.StatusServiceUnavailable || i == 50 {
			t.Fatalf("after the call ended: %d %q", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLimitOptions: negative limits are refused where unbounded makes no
// sense, and accepted where "no bound" is a choice.
func TestLimitOptions(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "0"}, nil)
	if _, err := mcphttp.New(s, &mcphttp.Options{BodyReadTimeout: -1}); err == nil || !strings.Contains(err.Error(), "BodyReadTimeout") {
		t.Errorf("negative BodyReadTimeout: %v", err)
	}
	for _, o := range []mcphttp.Options{{MaxInFlight: -1}, {MaxSessionsPerIdentity: -1}} {
		if _, err := mcphttp.New(s, &o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestSlowBodyTakesNoSlot: a connection still sending its body does not
// count against MaxInFlight, so clients trickling bodies cannot lock others
// out (the body deadline bounds them instead).
func TestSlowBodyTakesNoSlot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{MaxInFlight: 1}})
	conn, err := net.Dial("tcp", f.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+f.ts.Listener.Addr().String()+
		"\r\nContent-Type: application/json\r\nAuthorization: Bearer "+aliceTok+"\r\nContent-Length: 200\r\n\r\n{")
	// Probe repeatedly: the slow request reaches the handler within
	// moments, and from then on it would hold the only slot if bodies
	// counted. Every probe must be served.
	for i := range 10 {
		if r := f.do(t, http.MethodPost, f.url, initBody, auth(aliceTok)); r.status != http.StatusOK {
			t.Fatalf("probe %d while a body trickles: %d %q, want 200", i, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
