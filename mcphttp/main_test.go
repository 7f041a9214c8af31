package mcphttp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	// canary is the Proxmox token secret of every fixture: it must never
	// appear in an HTTP response or a log line.
	canary   = "c4a7a3f1-0bad-4ca5-8eed-00000000ca9a"
	tokenID  = "automation@pve!http"
	aliceTok = "alice-0123456789abcdef0123456789abcdef"
	bobTok   = "bob-0123456789abcdef0123456789abcdef0000"
)

var protocolVersions = []string{"", "2025-11-25"}

func pvName(pv string) string {
	if pv == "" {
		return "latest"
	}
	return pv
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer = testutil.SyncBuffer

// fixture is a fake Proxmox, our MCP server for it, the HTTP handler and
// an httptest server on 127.0.0.1, all closed with the test.
type fixture struct {
	fake    *proxmoxtest.Server
	server  *mcp.Server
	handler *mcphttp.Handler
	ts      *httptest.Server
	url     string // the MCP endpoint
	logs    *syncBuffer
	// seen collects every HTTP response (status, headers, body) that the
	// raw helpers received, for the canary check.
	seen *syncBuffer
}

type fixtureOpts struct {
	opts  mcphttp.Options
	noTok bool              // no TokenVerifier
	extra func(*mcp.Server) // runs before serving
}

func newFixture(t *testing.T, fo fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{logs: &syncBuffer{}, seen: &syncBuffer{}}
	cluster := proxmoxtest.DemoCluster()
	cluster.Tokens = map[string]*proxmoxtest.Token{tokenID: {
		Secret: canary, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()},
	}}
	f.fake = proxmoxtest.NewServer(cluster)
	t.Cleanup(f.fake.Close)
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: f.fake.URL, TokenID: tokenID, TokenSecret: canary, Fingerprint: f.fake.Fingerprint(),
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2", "pve3"}, ReadOnly: true},
		Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.server = mcpserver.New(client, &mcpserver.Options{Logger: logger, ReadOnly: true})
	if fo.extra != nil {
		fo.extra(f.server)
	}
	o := fo.opts
	if !fo.noTok && o.TokenVerifier == nil {
		v, err := mcphttp.StaticTokenVerifier(map[string]string{"alice": aliceTok, "bob": bobTok})
		if err != nil {
			t.Fatal(err)
		}
		o.TokenVerifier = v
	}
	o.Logger = logger
	f.handler, err = mcphttp.New(f.server, &o)
	if err != nil {
		t.Fatal(err)
	}
	f.ts = httptest.NewServer(f.handler)
	path := o.Path
	if path == "" {
		path = mcphttp.DefaultPath
		if o.LegacySSE {
			path = mcphttp.DefaultSSEPath
		}
	}
	f.url = f.ts.URL + path
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.handler.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		f.ts.Close()
		f.checkCanary(t)
	})
	return f
}

// checkCanary fails if the Proxmox secret or the Proxmox header scheme
// shows up in any response or log line the test saw.
func (f *fixture) checkCanary(t *testing.T) {
	t.Helper()
	for where, s := range map[string]string{"HTTP responses": f.seen.String(), "logs": f.logs.String()} {
		for _, needle := range []string{canary, "PVEAPIToken"} {
			if strings.Contains(s, needle) {
				t.Errorf("%s contain %q", where, needle)
			}
		}
	}
	for _, tok := range []string{aliceTok, bobTok} {
		if strings.Contains(f.logs.String(), tok) {
			t.Errorf("logs contain a client bearer token")
		}
	}
}

// bearer adds an Authorization header to every request of a go-sdk client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// connect opens a go-sdk streamable HTTP client session with token.
func (f *fixture) connect(t *testing.T, token, pv string) *mcp.ClientSession {
	t.Helper()
	cs, err := f.tryConnect(t, token, pv)
	if err != nil {
		t.Fatalf("connect: %v\nlogs:\n%s", err, f.logs.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func (f *fixture) tryConnect(t *testing.T, token, pv string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{
		Endpoint:   f.url,
		HTTPClient: &http.Client{Transport: bearer{token, f.ts.Client().Transport}},
	}
	return mcp.NewClient(&mcp.Implementation{Name: "mcphttp-test", Version: "0"}, nil).
		Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: pv})
}

// response is what a raw request returned.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a raw request; hdr values of "" delete the header. The body is
// read in full (bounded) and closed, so no connection goroutine lingers.
func (f *fixture) do(t *testing.T, method, url, body string, hdr map[string]string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var b []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && method == http.MethodGet {
		// A standalone event stream never ends; the status is enough.
		b = nil
	} else {
		b, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
	r := response{resp.StatusCode, resp.Header, string(b)}
	hj, _ := json.Marshal(resp.Header)
	f.seen.Write([]byte(resp.Status + " " + string(hj) + "\n" + r.body + "\n"))
	return r
}

func auth(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// pingBody is a request that needs no session state in stateless mode.
const pingBody = `{"jsonrpc":"2.0","id":9002,"method":"ping"}`

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
