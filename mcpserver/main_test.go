package mcpserver

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	// Production skips it (served.go); here every tool result a test sees
	// is checked against the output schema the tool advertises.
	validateOutputs = true
	checkText = textRoundTrip // content_test.go
	flag.Parse()
	// With -update, serve what the types infer now, not the compiled
	// schemas_generated.go the same run rewrites: one run refreshes both
	// it and the golden files.
	inferSchemas = *update
	goleak.VerifyTestMain(m)
}

// protocols are the protocol versions every behavioural test runs on: ""
// (the client's newest, 2026-07-28) and the newest legacy one.
var protocols = []string{"", "2025-11-25"}

func protoName(pv string) string {
	if pv == "" {
		return "newest"
	}
	return pv
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer = testutil.SyncBuffer

// memAudit is the library's hash-chained audit log over an in-memory
// buffer, so tests can look at exactly what an audit log file would hold.
type memAudit struct {
	*auditlog.Log
	buf *syncBuffer
}

func newMemAudit() *memAudit {
	buf := &syncBuffer{}
	return &memAudit{Log: auditlog.New(buf, nil), buf: buf}
}

func (a *memAudit) String() string { return a.buf.String() }

// records parses the log and returns the records after the anchor; it
// fails the test if the chain does not verify.
func (a *memAudit) records(tb testing.TB) []proxmoxsafe.AuditRecord {
	tb.Helper()
	data := a.buf.String()
	sum, err := auditlog.Verify(strings.NewReader(data), nil)
	if err != nil {
		tb.Fatalf("audit log does not verify: %v", err)
	}
	var recs []proxmoxsafe.AuditRecord
	for line := range strings.Lines(data) {
		var rec proxmoxsafe.AuditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			tb.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, rec)
	}
	if sum.Records != len(recs) {
		tb.Fatalf("Verify counted %d records, the file has %d", sum.Records, len(recs))
	}
	if len(recs) > 0 && recs[0].Event == proxmoxsafe.AuditAnchor {
		recs = recs[1:] // the log's own first record
	}
	return recs
}

// defaultPolicy allows pve1 and pve2 (not pve3), power and snapshot, and
// protects guest 201.
func defaultPolicy() proxmoxsafe.Policy {
	return proxmoxsafe.Policy{
		AllowedNodes:    []string{"pve1", "pve2"},
		Classes:         []proxmoxsafe.Class{proxmoxsafe.ClassPower, proxmoxsafe.ClassSnapshot},
		ProtectedGuests: []int{201},
	}
}

type fixtureConfig struct {
	cluster *proxmoxtest.Cluster // nil: DemoCluster
	policy  *proxmoxsafe.Policy  // nil: defaultPolicy
	secret  string               // the client's token secret; "": the fake's default
	maxWait time.Duration        // the operator's wait cap; 0: the library's default
	opts    Options
	// extra runs on the server before it is connected.
	extra func(*mcp.Server)
}

type fixture struct {
	fake   *proxmoxtest.Server
	client *proxmoxsafe.Client
	audit  *memAudit
	logs   *syncBuffer // library and server logs, JSON lines
	server *mcp.Server
	cs     *mcp.ClientSession
}

// newClient returns a library client for the fake, pinned to its certificate.
func newClient(tb testing.TB, fake *proxmoxtest.Server, pol proxmoxsafe.Policy, secret string, audit proxmoxsafe.AuditSink, logger *slog.Logger) *proxmoxsafe.Client {
	tb.Helper()
	return newClientWait(tb, fake, pol, secret, audit, logger, 0)
}

// newClientWait is newClient with the operator's wait cap maxWait (0: the
// library's default).
func newClientWait(tb testing.TB, fake *proxmoxtest.Server, pol proxmoxsafe.Policy, secret string, audit proxmoxsafe.AuditSink, logger *slog.Logger, maxWait time.Duration) *proxmoxsafe.Client {
	tb.Helper()
	if secret == "" {
		secret = proxmoxtest.DefaultTokenSecret
	}
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:         fake.URL,
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: secret,
		Fingerprint: fake.Fingerprint(),
		Policy:      pol,
		Audit:       audit,
		Logger:      logger,
		MaxWait:     maxWait,
	})
	if err != nil {
		tb.Fatalf("proxmoxsafe.New: %v", err)
	}
	return c
}

// newFixture starts a fake cluster, a library client, our MCP server and a
// client session on protocol version pv, all cleaned up with tb.
func newFixture(tb testing.TB, ctx context.Context, pv string, cfg fixtureConfig) *fixture {
	tb.Helper()
	f := &fixture{audit: newMemAudit(), logs: &syncBuffer{}}
	f.fake = proxmoxtest.NewServer(cfg.cluster)
	tb.Cleanup(f.fake.Close)
	pol := defaultPolicy()
	if cfg.policy != nil {
		pol = *cfg.policy
	}
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.client = newClientWait(tb, f.fake, pol, cfg.secret, f.audit, logger, cfg.maxWait)
	opts := cfg.opts
	if opts.Logger == nil {
		opts.Logger = logger
	}
	f.server = New(f.client, &opts)
	if cfg.extra != nil {
		cfg.extra(f.server)
	}
	f.cs = connect(tb, ctx, f.server, pv)
	return f
}

// connect opens an in-memory client session to server.
func connect(tb testing.TB, ctx context.Context, server *mcp.Server, pv string) *mcp.ClientSession {
	tb.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatalf("server.Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0.0.1"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		ss.Close()
		tb.Fatalf("client.Connect: %v", err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and fails the test on a protocol error.
func (f *fixture) call(tb testing.TB, ctx context.Context, name string, args any) *mcp.CallToolResult {
	tb.Helper()
	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// text returns the result's single text content.
func text(tb testing.TB, res *mcp.CallToolResult) string {
	tb.Helper()
	if len(res.Content) != 1 {
		tb.Fatalf("want exactly one content, got %d: %s", len(res.Content), mustJSON(tb, res))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// structured decodes the result's structuredContent into out.
func structured(tb testing.TB, res *mcp.CallToolResult, out any) {
	tb.Helper()
	if res.IsError {
		tb.Fatalf("tool error: %s", text(tb, res))
	}
	if res.StructuredContent == nil {
		tb.Fatal("no structuredContent")
	}
	if err := json.Unmarshal([]byte(mustJSON(tb, res.StructuredContent)), out); err != nil {
		tb.Fatalf("decoding structuredContent: %v", err)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("json.Marshal: %v", err)
	}
	return string(b)
}

// wantError checks that res is a tool error whose text has every fragment.
func wantError(tb testing.TB, res *mcp.CallToolResult, fragments ...string) string {
	tb.Helper()
	if !res.IsError {
		tb.Fatalf("want isError, got success: %s", mustJSON(tb, res))
	}
	msg := text(tb, res)
	for _, frag := range fragments {
		if !strings.Contains(msg, frag) {
			tb.Errorf("error text %q does not contain %q", msg, frag)
		}
	}
	return msg
}

// requestLine renders a fake request as "METHOD /path".
func requestLine(r proxmoxtest.Request) string { return r.Method + " " + r.Path }

func requestLines(rs []proxmoxtest.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = requestLine(r)
	}
	return out
}
