package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var metricsRe = regexp.MustCompile(`msg="serving Prometheus metrics" url=(http://127\.0\.0\.1:\d+/metrics)`)

// TestMetricsScraped: the built binary serving the HTTP demo with
// --metrics-addr; after a read, a refused mutation and an unknown tool a
// scrape shows each counter it must, the durations and the session, and
// no argument value.
func TestMetricsScraped(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, cleanEnv(), "--demo", "--metrics-addr", "127.0.0.1:0")
	var murl string
	for deadline := time.Now().Add(terminateWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := metricsRe.FindStringSubmatch(p.stderr.String()); m != nil {
			murl = m[1]
			break
		}
	}
	if murl == "" {
		t.Fatalf("no metrics URL logged:\n%s", p.stderr.String())
	}
	cs := httpClient(t, p.url, "")
	defer cs.Close()
	ctx := t.Context()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_guests", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("list_guests: %v %+v", err, res)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "guest_power", Arguments: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}}); err != nil || !res.IsError {
		t.Fatalf("guest_power without approval: %v %+v", err, res)
	}
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "secret_tool_name_42", Arguments: map[string]any{}})

	resp, err := http.Get(murl)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := string(body)
	for _, want := range []string{
		`proxmox_safe_tool_calls_total{tool="list_guests",outcome="ok"} 1`,
		`proxmox_safe_tool_calls_total{tool="guest_power",outcome="refused"} 1`,
		`proxmox_safe_tool_calls_total{tool="unknown",outcome="error"} 1`,
		`proxmox_safe_refusals_total{kind="approval required"} 1`,
		`proxmox_safe_tool_call_duration_seconds_count{tool="list_guests"} 1`,
		`proxmox_safe_upstream_requests_total{method="GET",status="2xx"} `,
		`proxmox_safe_upstream_request_duration_seconds_bucket{method="GET",le=`,
		`proxmox_safe_mcp_sessions 1`,
		`go_goroutines `, `# TYPE proxmox_safe_tool_calls_total counter`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, never := range []string{"secret_tool_name_42", "shutdown", "pve1", `vmid`} {
		if strings.Contains(out, never) {
			t.Errorf("scrape names %q", never)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", out)
	}
}
