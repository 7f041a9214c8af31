package cdp_test

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/testutil/cdp"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestBrowser drives a page as the browser tests do: navigate and read the
// answer's status and headers, read the text and evaluate, fill a form and
// submit it (the post's answer is the new document), wait for a value,
// and take a screenshot that is a PNG. Skipped without chromium.
func TestBrowser(t *testing.T) {
	chromium := cdp.Chromium()
	if chromium == "" {
		t.Skip("no chromium installed (Debian package chromium)")
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			fmt.Fprintf(w, "<p id=got>got %s</p>", html.EscapeString(r.FormValue("name")))
			return
		}
		fmt.Fprint(w, `<form method=post><input name=name><button id=send>send</button></form><p>hello, reader</p>`)
	}))
	defer ts.Close()
	tab := cdp.Start(t, chromium).NewTab()
	doc := tab.Navigate(ts.URL + "/")
	if doc.Status != http.StatusOK || doc.Headers["X-Test"]+doc.Headers["x-test"] != "yes" {
		t.Errorf("document = %+v", doc)
	}
	if !strings.Contains(tab.Text(), "hello, reader") {
		t.Errorf("text = %q", tab.Text())
	}
	if got := tab.Eval("String(1 + 1)"); got != "2" {
		t.Errorf("Eval = %q", got)
	}
	tab.Until("the page loaded", "document.readyState === 'complete'")
	shot := tab.Screenshot()
	if !bytes.HasPrefix(shot, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(shot))
	}
	doc = tab.Submit("#send", map[string]string{"name": `a "quoted" <name>`})
	if doc.Status != http.StatusOK {
		t.Errorf("post answered %+v", doc)
	}
	if got := tab.Eval("document.getElementById('got').textContent"); got != `got a "quoted" <name>` {
		t.Errorf("posted form read back as %q", got)
	}
}
