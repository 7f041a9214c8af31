package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

var metricsRe = regexp.MustCompile(`msg="serving Prometheus metrics" url=(http://127\.0\.0\.1:\d+/metrics)`)

// TestMetricsScraped: the built binary serving the HTTP demo with
// --metrics-addr; after a read, a refused mutation and an unknown tool a
// scrape shows each counter it must, the durations and the session, and
// no argument value.
func TestMetricsScraped(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, cleanEnv(), "--demo", "--metrics-addr", "127.0.0.1:0")
	murl := metricsURL(t, p)
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

	out := scrape(t, murl)
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
	// The heap gauge reads the Go heap in use: never 0 in a running server.
	if m := regexp.MustCompile(`(?m)^go_heap_objects_bytes (\S+)$`).FindStringSubmatch(out); m == nil {
		t.Error("scrape lacks go_heap_objects_bytes")
	} else if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
		t.Errorf("go_heap_objects_bytes %s: want a positive number of bytes", m[1])
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

// metricsURL waits for the server p to log where it serves its metrics.
func metricsURL(t *testing.T, p *httpProc) string {
	t.Helper()
	for deadline := time.Now().Add(terminateWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := metricsRe.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no metrics URL logged:\n%s", p.stderr.String())
	return ""
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestMetricsClustersFile: the built binary with a clusters file of two
// fakes and --metrics-addr serves one metrics endpoint where the tool
// calls, refusals and requests to Proxmox are counted by cluster: the one
// a call names, * for a read across several, none for a call that names
// no configured cluster (whose name is never a label).
func TestMetricsClustersFile(t *testing.T) {
	t.Parallel()
	fakes := map[string]*proxmoxtest.Server{}
	for _, n := range []string{"lab", "prod"} {
		fakes[n] = proxmoxtest.NewServer(nil)
		t.Cleanup(fakes[n].Close)
	}
	_, env := clustersSetup(t, t.TempDir(), fakes, "lab", "prod")
	p := startHTTP(t, append(env, "MCP_AUTH_TOKEN="+httpToken), "--metrics-addr", "127.0.0.1:0")
	murl := metricsURL(t, p)
	if strings.Contains(p.stderr.String(), "runs without metrics") {
		t.Errorf("warned about metrics:\n%s", p.stderr.String())
	}
	cs := httpClient(t, p.url, httpToken)
	defer cs.Close()
	ctx := t.Context()
	for _, c := range []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{"list_guests", map[string]any{"cluster": "lab"}, false},
		{"storage_list", map[string]any{"cluster": "*"}, false},
		{"guest_power", map[string]any{"cluster": "prod", "node": "pve1", "type": "qemu", "vmid": 100, "action": "shutdown"}, true},
		{"list_guests", map[string]any{"cluster": "secretcluster42"}, true},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError != c.refused {
			t.Fatalf("%s %v: %v %+v", c.tool, c.args, err, res)
		}
	}
	out := scrape(t, murl)
	for _, want := range []string{
		`proxmox_safe_tool_calls_total{tool="list_guests",outcome="ok",cluster="lab"} 1`,
		`proxmox_safe_tool_calls_total{tool="storage_list",outcome="ok",cluster="*"} 1`,
		`proxmox_safe_tool_calls_total{tool="guest_power",outcome="refused",cluster="prod"} 1`,
		`proxmox_safe_refusals_total{kind="approval required",cluster="prod"} 1`,
		`proxmox_safe_tool_calls_total{tool="list_guests",outcome="refused"} 1`,
		`proxmox_safe_tool_call_duration_seconds_count{tool="list_guests",cluster="lab"} 1`,
		`proxmox_safe_upstream_requests_total{method="GET",status="2xx",cluster="lab"} `,
		`proxmox_safe_upstream_requests_total{method="GET",status="2xx",cluster="prod"} `,
		`proxmox_safe_upstream_request_duration_seconds_bucket{method="GET",cluster="prod",le=`,
		`proxmox_safe_mcp_sessions 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, never := range []string{"secretcluster42", "shutdown", "pve1"} {
		if strings.Contains(out, never) {
			t.Errorf("scrape names %q", never)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", out)
	}
}
