// Package cdp is a minimal Chrome DevTools Protocol client for the tests
// that drive a real headless Chromium (Debian's package "chromium"): over
// --remote-debugging-pipe (chromium reads commands on fd 3 and writes
// answers and events on fd 4, each message JSON ended by a NUL byte), so
// a test needs the standard library only: no WebSocket, no extra module.
// The Runtime.evaluate calls come from DevTools, outside a page's
// Content-Security-Policy; tests use them to read what a page shows and
// to fill in fields and press buttons as a person would. Form submission,
// cookies, redirects, SameSite, sandboxed frames and CSP are the browser's
// own.
package cdp

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wait bounds every wait for the browser. Not a timing assertion: only
// a bound on a hung browser.
const Wait = 60 * time.Second

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Browser is one headless chromium process.
type Browser struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     *os.File // our end of fd 3
	stderr strings.Builder

	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpMsg
	events  []cdpMsg
	changed chan struct{} // signalled when events grow
	done    chan struct{} // closed when the reader ends
}

// Chromium finds Debian's chromium (package "chromium"), or "".
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts chromium (a path from [Chromium]) headless with a fresh
// profile; the browser is killed when t ends.
func Start(t *testing.T, chromium string) *Browser {
	t.Helper()
	cmdR, cmdW, err := os.Pipe() // we write commands, chromium reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // chromium writes fd 4, we read
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{t: t, in: cmdW, pending: map[int]chan cdpMsg{}, changed: make(chan struct{}, 1), done: make(chan struct{})}
	// The flags that work on these machines (no sandbox as root, no
	// background connections to a closed network); a fresh profile.
	b.cmd = exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1100,900",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "about:blank")
	// Chromium leaves its singleton socket directory in $TMPDIR when it is
	// killed: give it one the test removes (short: a socket path is at
	// most 107 bytes, which t.TempDir's names can exceed).
	tmp, err := os.MkdirTemp("", "cr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	b.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	b.cmd.ExtraFiles = []*os.File{cmdR, outW}
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	go b.read(outR)
	t.Cleanup(func() {
		b.in.Close()
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		outR.Close()
		<-b.done
	})
	return b
}

func (b *Browser) read(r *os.File) {
	defer close(b.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMsg
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else {
			b.events = append(b.events, m)
			select {
			case b.changed <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

// call sends a command (to a page when session is set) and decodes its
// result into out (may be nil).
func (b *Browser) call(session, method string, params any, out any) {
	b.t.Helper()
	if params == nil {
		params = struct{}{}
	}
	p, _ := json.Marshal(params)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMsg, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	raw, _ := json.Marshal(cdpMsg{ID: id, Method: method, SessionID: session, Params: p})
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("%s: %v\n%s", method, err, b.stderr.String())
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			b.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				b.t.Fatalf("%s: %v", method, err)
			}
		}
	case <-b.done:
		b.t.Fatalf("%s: chromium went away:\n%s", method, b.stderr.String())
	case <-time.After(Wait):
		b.t.Fatalf("%s: no answer from chromium", method)
	}
}

// Tab is one page (target) of the browser; all tabs share its cookies.
type Tab struct {
	b       *Browser
	session string
	seen    int // events before this index are consumed
}

// NewTab opens a blank page.
func (b *Browser) NewTab() *Tab {
	b.t.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &created)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call("", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached)
	tb := &Tab{b: b, session: attached.SessionID}
	for _, m := range []string{"Page.enable", "Network.enable", "Runtime.enable"} {
		b.call(tb.session, m, nil, nil)
	}
	return tb
}

// Document is the last main-document answer a tab got.
type Document struct {
	URL     string            `json:"url"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// Act runs do (which starts a navigation) and waits for the page to load;
// it returns the main document's answer.
func (tb *Tab) Act(do func()) Document {
	tb.b.t.Helper()
	tb.b.mu.Lock()
	tb.seen = len(tb.b.events)
	tb.b.mu.Unlock()
	do()
	var doc Document
	deadline := time.After(Wait)
	for {
		tb.b.mu.Lock()
		evs := tb.b.events[tb.seen:]
		tb.seen = len(tb.b.events)
		tb.b.mu.Unlock()
		for _, e := range evs {
			if e.SessionID != tb.session {
				continue
			}
			switch e.Method {
			case "Network.responseReceived":
				var p struct {
					Type     string   `json:"type"`
					Response Document `json:"response"`
				}
				if json.Unmarshal(e.Params, &p) == nil && p.Type == "Document" {
					doc = p.Response
				}
			case "Page.loadEventFired":
				return doc
			}
		}
		select {
		case <-tb.b.changed:
		case <-tb.b.done:
			tb.b.t.Fatalf("chromium went away:\n%s", tb.b.stderr.String())
		case <-deadline:
			tb.b.t.Fatal("the page did not load")
		}
	}
}

// Navigate loads url and returns its main document's answer.
func (tb *Tab) Navigate(url string) Document {
	return tb.Act(func() { tb.b.call(tb.session, "Page.navigate", map[string]any{"url": url}, nil) })
}

// Eval evaluates js in the page and returns its string value.
func (tb *Tab) Eval(js string) string {
	tb.b.t.Helper()
	var out struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	tb.b.call(tb.session, "Runtime.evaluate", map[string]any{"expression": js, "returnByValue": true}, &out)
	if out.ExceptionDetails != nil {
		tb.b.t.Fatalf("evaluate %q: %s", js, out.ExceptionDetails.Text)
	}
	return fmt.Sprint(out.Result.Value)
}

// Text is the page's visible text.
func (tb *Tab) Text() string { return tb.Eval("document.body ? document.body.innerText : ''") }

// Submit fills the named fields of the form holding button and presses
// the button, as a person would; it returns the answer to the post.
func (tb *Tab) Submit(button string, fields map[string]string) Document {
	tb.b.t.Helper()
	var js strings.Builder
	js.WriteString("(() => { const btn = document.querySelector(" + JSString(button) + "); const f = btn.form;")
	for k, v := range fields {
		js.WriteString(" f.elements[" + JSString(k) + "].value = " + JSString(v) + ";")
	}
	js.WriteString(" btn.click(); return 'ok'; })()")
	return tb.Act(func() { tb.Eval(js.String()) })
}

// Screenshot returns a PNG of the tab.
func (tb *Tab) Screenshot() []byte {
	tb.b.t.Helper()
	var out struct {
		Data string `json:"data"`
	}
	tb.b.call(tb.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &out)
	png, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		tb.b.t.Fatal(err)
	}
	return png
}

// JSString is s as a JavaScript string literal.
func JSString(s string) string { b, _ := json.Marshal(s); return string(b) }

// ScreenshotOf returns a PNG of the part of the tab the element selector
// (a CSS selector) covers, in CSS pixels.
func (tb *Tab) ScreenshotOf(selector string) []byte {
	tb.b.t.Helper()
	var box struct{ X, Y, W, H float64 }
	js := "(() => { const r = document.querySelector(" + JSString(selector) + ").getBoundingClientRect();" +
		" return JSON.stringify({X: r.left + scrollX, Y: r.top + scrollY, W: r.width, H: r.height}); })()"
	if err := json.Unmarshal([]byte(tb.Eval(js)), &box); err != nil {
		tb.b.t.Fatalf("the box of %s: %v", selector, err)
	}
	var out struct {
		Data string `json:"data"`
	}
	tb.b.call(tb.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": box.X, "y": box.Y, "width": box.W, "height": box.H, "scale": 1}}, &out)
	png, err := base64.StdEncoding.DecodeString(out.Data)
	if err != nil {
		tb.b.t.Fatal(err)
	}
	return png
}

// Until evaluates js in the page until its value is true, and fails the
// test when it is not within [Wait]; what says what was awaited.
func (tb *Tab) Until(what, js string) {
	tb.b.t.Helper()
	deadline := time.Now().Add(Wait)
	for tb.Eval(js) != "true" {
		if time.Now().After(deadline) {
			tb.b.t.Fatalf("%s: not within %v", what, Wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Frame attaches to the out-of-process frame whose document is at url (a
// sandboxed or cross-origin iframe is a target of its own), waiting for it
// within [Wait]. The Tab it returns evaluates in that frame; its Log
// domain is enabled, so [Tab.Events] holds the console and CSP messages of
// the frame, those before the attach included.
func (b *Browser) Frame(url string) *Tab {
	b.t.Helper()
	deadline := time.Now().Add(Wait)
	for {
		var got struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
				URL      string `json:"url"`
			} `json:"targetInfos"`
		}
		b.call("", "Target.getTargets", nil, &got)
		for _, ti := range got.TargetInfos {
			if ti.Type != "iframe" || ti.URL != url {
				continue
			}
			var attached struct {
				SessionID string `json:"sessionId"`
			}
			b.call("", "Target.attachToTarget", map[string]any{"targetId": ti.TargetID, "flatten": true}, &attached)
			ft := &Tab{b: b, session: attached.SessionID}
			for _, m := range []string{"Runtime.enable", "Log.enable"} {
				b.call(ft.session, m, nil, nil)
			}
			return ft
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no frame at %s within %v", url, Wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Events returns the params of every event of method the tab got so far.
func (tb *Tab) Events(method string) []json.RawMessage {
	tb.b.mu.Lock()
	defer tb.b.mu.Unlock()
	var out []json.RawMessage
	for _, e := range tb.b.events {
		if e.SessionID == tb.session && e.Method == method {
			out = append(out, e.Params)
		}
	}
	return out
}
