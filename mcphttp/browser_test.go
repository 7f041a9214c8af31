package mcphttp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
)

// chromiumPath finds Debian's chromium (package "chromium"), or "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserPage is served from an origin of its own. It drives the MCP
// endpoint with fetch the way a browser MCP client does (initialize with a
// bearer token, read Mcp-Session-Id, call a tool, end the session) and
// posts what happened back to its own origin.
const browserPage = `<!doctype html><html><body><script>
const MCP = %q, TOKEN = %q;
const out = {};
const post = (body, sid) => fetch(MCP, {method: "POST", body: JSON.stringify(body), headers: Object.assign(
  {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN},
  sid ? {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"} : {})});
(async () => {
  try {
    let r = await post({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "browser", version: "0"}}});
    out.initStatus = r.status;
    const sid = r.headers.get("Mcp-Session-Id");
    out.sessionIdReadable = !!sid;
    await r.text();
    r = await post({jsonrpc: "2.0", method: "notifications/initialized"}, sid);
    out.initializedStatus = r.status;
    r = await post({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "list_guests", arguments: {}}}, sid);
    out.callStatus = r.status;
    out.callBody = (await r.text()).slice(0, 20000);
    r = await fetch(MCP, {method: "DELETE", headers: {"Authorization": "Bearer " + TOKEN, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}});
    out.deleteStatus = r.status;
  } catch (e) {
    out.error = String(e);
  }
  await fetch("/report", {method: "POST", body: JSON.stringify(out)});
})();
</script></body></html>`

type browserReport struct {
	InitStatus        int    `json:"initStatus"`
	SessionIDReadable bool   `json:"sessionIdReadable"`
	InitializedStatus int    `json:"initializedStatus"`
	CallStatus        int    `json:"callStatus"`
	CallBody          string `json:"callBody"`
	DeleteStatus      int    `json:"deleteStatus"`
	Error             string `json:"error"`
}

// page is an origin serving browserPage; mcp is the endpoint it calls,
// stored before the browser opens it.
type page struct {
	*httptest.Server
	mcp     atomic.Value // string
	reports chan browserReport
}

func newPage(t *testing.T) *page {
	t.Helper()
	p := &page{reports: make(chan browserReport, 1)}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, browserPage, p.mcp.Load(), aliceTok)
		case "/report":
			var rep browserReport
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err := json.Unmarshal(b, &rep); err != nil {
				rep.Error = "bad report: " + string(b)
			}
			select {
			case p.reports <- rep:
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// open loads the page in headless Chromium and returns its report.
func (p *page) open(t *testing.T, chromium string) browserReport {
	t.Helper()
	// The flags that work on these machines (no sandbox as root, no
	// background connections to a closed network); a fresh profile.
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), p.URL+"/")
	// Chromium leaves its singleton socket directory in $TMPDIR when it is
	// killed: give it one the test removes (short: a socket path is at
	// most 107 bytes, which t.TempDir's names can exceed).
	tmp, err := os.MkdirTemp("", "cr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	// Not a timing assertion: only a bound on a hung browser.
	select {
	case rep := <-p.reports:
		return rep
	case err := <-exited:
		t.Fatalf("chromium exited before the page reported (%v):\n%s", err, stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("no report from the page in headless chromium; its stderr:\n%s", stderr.String())
	}
	return browserReport{}
}

// TestBrowserCORS drives the endpoint from pages in real headless
// Chromium: a page on an allowed origin completes a session (preflight,
// bearer token, readable Mcp-Session-Id, tool call, DELETE); a page on any
// other origin is stopped, and nothing it sent reaches Proxmox.
//
// It needs Debian's chromium package (.ci/run installs it) and skips only
// when no chromium binary is on PATH.
func TestBrowserCORS(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("SKIP: chromium is not installed, so the browser CORS test cannot run; install it with `apt-get install chromium` (CI does)")
	}
	good, evil := newPage(t), newPage(t)
	f := newFixture(t, fixtureOpts{opts: mcphttp.Options{AllowedOrigins: []string{good.URL}}})
	good.mcp.Store(f.url)
	evil.mcp.Store(f.url)

	rep := good.open(t, chromium)
	if rep.Error != "" || rep.InitStatus != http.StatusOK || !rep.SessionIDReadable ||
		rep.InitializedStatus != http.StatusAccepted || rep.CallStatus != http.StatusOK ||
		!strings.Contains(rep.CallBody, "guests") || rep.DeleteStatus != http.StatusNoContent {
		t.Errorf("allowed origin %s: %+v", good.URL, rep)
	}
	upstream := len(f.fake.Requests())
	if upstream == 0 {
		t.Error("the allowed page's tool call did not reach the fake Proxmox")
	}

	rep = evil.open(t, chromium)
	if rep.Error == "" || rep.InitStatus != 0 {
		t.Errorf("other origin %s was not stopped: %+v", evil.URL, rep)
	}
	if n := len(f.fake.Requests()); n != upstream {
		t.Errorf("the other origin's page caused %d upstream requests", n-upstream)
	}
	if !strings.Contains(f.logs.String(), "origin not allowed") {
		t.Error("no log line for the refused origin")
	}
}
