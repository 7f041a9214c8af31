package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/cdp"
)

// appHostCSP is the policy the MCP Apps spec has a host apply to a view
// whose csp declares no origin (ours): inline script and style, data:
// images, no connection, no frame, no object.
const appHostCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'"

// appHostPage is a test host's page, written from the MCP Apps spec
// (2026-01-26) as a desktop host does it: the view in an iframe sandboxed
// to allow-scripts only (an opaque origin), served under appHostCSP;
// JSON-RPC over postMessage with that frame only. It answers
// ui/initialize (offering serverTools), sends the tool input and result
// once the view says it is initialized, sizes the frame from
// size-changed, and forwards tools/call to the MCP server (through /call,
// the test's client). Every message the view sent is in window.hostLog.
const appHostPage = `<!doctype html><html><head><meta charset="utf-8"><title>test host</title>
<style>body{margin:0;padding:16px;background:#eef0f3;font:14px sans-serif}
iframe{display:block;width:840px;height:200px;border:1px solid #c9ced6;border-radius:8px;background:#fff}</style></head>
<body><iframe id="view" sandbox="allow-scripts" src="VIEW"></iframe>
<script>
const frame = document.getElementById("view");
window.hostLog = [];
const started = fetch("START").then((r) => r.json());
const post = (m) => frame.contentWindow.postMessage(Object.assign({jsonrpc: "2.0"}, m), "*");
window.addEventListener("message", async (e) => {
  if (e.source !== frame.contentWindow) return;
  const m = e.data;
  window.hostLog.push(m);
  if (m.method === "ui/initialize") {
    post({id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "test-host", version: "1"},
      hostCapabilities: {serverTools: {}},
      hostContext: {theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "desktop",
        containerDimensions: {width: 840, maxHeight: 2000}}}});
  } else if (m.method === "ui/notifications/initialized") {
    const s = await started;
    post({method: "ui/notifications/tool-input", params: {arguments: s.arguments}});
    post({method: "ui/notifications/tool-result", params: s.result});
  } else if (m.method === "ui/notifications/size-changed") {
    if (m.params && m.params.height > 0) frame.style.height = m.params.height + "px";
  } else if (m.method === "tools/call") {
    const r = await fetch("/call", {method: "POST", body: JSON.stringify(m.params)});
    if (r.ok) post({id: m.id, result: await r.json()});
    else post({id: m.id, error: {code: -32603, message: await r.text()}});
  } else if (m.id !== undefined) {
    post({id: m.id, error: {code: -32601, message: "Method not found"}});
  }
});
</script></body></html>`

// appHost serves appHostPage, the view and the MCP calls it forwards.
type appHost struct {
	view  string
	cs    *mcp.ClientSession
	cases map[string]any // /start?case=…: {"arguments": …, "result": …}

	mu    sync.Mutex
	calls []*mcp.CallToolParams // what the host forwarded, in order
}

func (h *appHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		c := r.URL.Query().Get("case")
		page := strings.NewReplacer("VIEW", "/view?case="+c, "START", "/start?case="+c).Replace(appHostPage)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	case "/view":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", appHostCSP)
		fmt.Fprint(w, h.view)
	case "/start":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(h.cases[r.URL.Query().Get("case")])
	case "/call":
		var p mcp.CallToolParams
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.calls = append(h.calls, &p)
		h.mu.Unlock()
		res, err := h.cs.CallTool(r.Context(), &p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	default:
		http.NotFound(w, r)
	}
}

func (h *appHost) forwarded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.calls {
		b, _ := json.Marshal(c.Arguments)
		out = append(out, c.Name+" "+string(b))
	}
	return out
}

// TestMetricsChartAppInChromium runs the view as a host runs it, in
// headless Chromium: the HTML read from the server, the tool's real
// result (metrics_chart on the fake's VM 102). It checks what a person
// sees, read from the view's own DOM: the decoded PNG (800x400) and the
// summary line; the handshake and sizing messages; that "week" and "max"
// have the host call metrics_chart again and show the new picture; that
// nothing broke the CSP a host applies; and that markup in a name shows
// as text. With -update it writes docs/metrics-chart-app.png. Skipped
// where Chromium is not installed (Debian package "chromium").
func TestMetricsChartAppInChromium(t *testing.T) {
	chromium := cdp.Chromium()
	if chromium == "" {
		t.Skip("no chromium on PATH")
	}
	f := newFixture(t, t.Context(), "", fixtureConfig{cluster: metricsCluster()})
	view := readApp(t, f.cs)
	day := map[string]any{"node": "pve1", "type": "qemu", "vmid": 102, "timeframe": "day"}
	first := f.call(t, t.Context(), ToolMetricsChart, day)
	if first.IsError || len(first.Content) != 2 {
		t.Fatalf("metrics_chart: %s", mustJSON(t, first))
	}
	firstLine := first.Content[0].(*mcp.TextContent).Text
	hostile := `pve1<img src=x onerror="document.title='pwned'">`
	refused := f.call(t, t.Context(), ToolMetricsChart, map[string]any{"node": hostile, "type": "qemu", "vmid": 102, "timeframe": "day"})
	if !refused.IsError {
		t.Fatalf("a node named %q was not refused: %s", hostile, mustJSON(t, refused))
	}
	// A summary line with markup in it, as an upstream message could
	// carry, beside the real picture.
	marked := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Storage " + hostile + " on pve1: RRD error"}, first.Content[1]}}
	host := &appHost{view: view, cs: f.cs, cases: map[string]any{
		"chart":   map[string]any{"arguments": day, "result": wireResult(t, first)},
		"refused": map[string]any{"arguments": map[string]any{"node": hostile, "type": "qemu", "vmid": 102, "timeframe": "day"}, "result": wireResult(t, refused)},
		"marked":  map[string]any{"arguments": day, "result": wireResult(t, marked)},
	}}
	ts := httptest.NewServer(host)
	t.Cleanup(ts.Close)
	f.fake.ResetRequests()

	b := cdp.Start(t, chromium)
	tab := b.NewTab()
	tab.Navigate(ts.URL + "/?case=chart")
	v := b.Frame(ts.URL + "/view?case=chart")
	chart := `document.getElementById("chart")`
	summary := `document.getElementById("summary").textContent`
	v.Until("the chart is shown", chart+".naturalWidth > 0 && !"+chart+".hidden")
	if got := v.Eval(chart + `.naturalWidth + "x" + ` + chart + ".naturalHeight"); got != "800x400" {
		t.Errorf("the view shows an image of %s, want 800x400", got)
	}
	if got := v.Eval(summary); got != firstLine {
		t.Errorf("summary = %q, want the tool's line %q", got, firstLine)
	}
	if got := v.Eval(`String(self.origin)`); got != "null" {
		t.Errorf("the view runs at origin %q, want an opaque one (sandboxed)", got)
	}
	// The handshake as the spec orders it, and the size the host needs.
	tab.Until("the frame is sized to the view", `document.getElementById("view").getBoundingClientRect().height > 400`)
	var log []struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(tab.Eval("JSON.stringify(window.hostLog)")), &log); err != nil {
		t.Fatal(err)
	}
	if len(log) < 3 || log[0].Method != "ui/initialize" || log[1].Method != "ui/notifications/initialized" ||
		!strings.Contains(string(log[0].Params), `"protocolVersion":"2026-01-26"`) || !strings.Contains(string(log[0].Params), `"appInfo":{`) {
		t.Errorf("the view's first messages: %s", tab.Eval("JSON.stringify(window.hostLog)"))
	}
	sized := false
	for _, m := range log {
		sized = sized || m.Method == "ui/notifications/size-changed"
	}
	if !sized {
		t.Error("the view sent no ui/notifications/size-changed")
	}
	if got := v.Eval(`[...document.querySelectorAll("button[aria-pressed=true]")].map(b => b.textContent).join(",")`); got != "day,average" {
		t.Errorf("pressed buttons %q, want day,average", got)
	}
	shot := tab.ScreenshotOf("#view")
	if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() < 800 {
		t.Fatalf("screenshot: %v", err)
	}
	if *update {
		if err := os.WriteFile(filepath.Join("..", "docs", "metrics-chart-app.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Another timeframe, then the maximum: the host calls metrics_chart
	// with the same target, and the view shows the new picture and line.
	firstSrc := v.Eval(chart + ".src")
	v.Eval(`document.querySelector("[data-timeframe=week]").click(), "ok"`)
	v.Until("the week's chart", summary+`.startsWith("VM 102 on pve1, last week (average): ") && `+chart+".src !== "+cdp.JSString(firstSrc))
	if got := v.Eval(chart + `.naturalWidth + "x" + ` + chart + ".naturalHeight"); got != "800x400" {
		t.Errorf("after week: an image of %s", got)
	}
	v.Eval(`document.querySelector("[data-cf=MAX]").click(), "ok"`)
	v.Until("the week's maxima", summary+`.startsWith("VM 102 on pve1, last week (max): ")`)
	if got := v.Eval(`[...document.querySelectorAll("button[aria-pressed=true]")].map(b => b.textContent).join(",")`); got != "week,max" {
		t.Errorf("pressed buttons %q, want week,max", got)
	}
	want := []string{
		`metrics_chart {"cf":"AVERAGE","node":"pve1","timeframe":"week","type":"qemu","vmid":102}`,
		`metrics_chart {"cf":"MAX","node":"pve1","timeframe":"week","type":"qemu","vmid":102}`,
	}
	if got := host.forwarded(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the host forwarded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range f.fake.Requests() {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.Path, "/rrddata") {
			t.Errorf("request to Proxmox: %s %s", r.Method, r.Path)
		}
	}
	// Nothing the view did broke the host's CSP or threw.
	for _, e := range v.Events("Log.entryAdded") {
		if strings.Contains(string(e), `"level":"error"`) {
			t.Errorf("the view logged: %s", e)
		}
	}

	// Markup stays text: in the arguments of a call (the server refuses
	// the node name without repeating it; the view shows the refusal),
	// and in a summary line beside a picture (as an upstream message in
	// it could carry).
	for _, c := range []struct{ name, shown, selector string }{
		{"refused", refused.Content[0].(*mcp.TextContent).Text, "status"},
		{"marked", marked.Content[0].(*mcp.TextContent).Text, "summary"},
	} {
		tb := b.NewTab()
		tb.Navigate(ts.URL + "/?case=" + c.name)
		fv := b.Frame(ts.URL + "/view?case=" + c.name)
		fv.Until(c.name+": the result is shown", `document.getElementById(`+cdp.JSString(c.selector)+`).textContent !== "" && document.getElementById("status").textContent !== "Waiting for the chart…"`)
		if got := fv.Eval(`document.getElementById(` + cdp.JSString(c.selector) + `).textContent`); got != c.shown {
			t.Errorf("%s: #%s shows %q, want the text %q", c.name, c.selector, got, c.shown)
		}
		if got := fv.Eval(`document.querySelectorAll("img").length + " " + document.title + " " + document.querySelectorAll("[onerror]").length`); got != "1 Metrics chart 0" {
			t.Errorf("%s: images, title, onerror attributes: %q (want only the chart's img, the title untouched)", c.name, got)
		}
		want := "error true" // the refusal: an error line, no picture
		if c.name == "marked" {
			want = " false"
		}
		if got := fv.Eval(`document.getElementById("status").className + " " + ` + chart + ".hidden"); got != want {
			t.Errorf("%s: status class and chart hidden: %q, want %q", c.name, got, want)
		}
	}
}
