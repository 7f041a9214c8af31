package approvalweb_test

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

// A minimal Chrome DevTools Protocol client over --remote-debugging-pipe
// (chromium reads commands on fd 3 and writes answers and events on fd 4,
// each message JSON ended by a NUL byte), so the test drives a real
// browser with the standard library only: no WebSocket, no extra module.
// The approval page runs no script; the test's Runtime.evaluate calls come
// from DevTools, outside the page's Content-Security-Policy, and only
// fill in fields and press buttons as a person would. Form submission,
// cookies, redirects, SameSite and the CSP itself are the browser's own.

// cdpWait bounds every wait for the browser. Not a timing assertion: only
// a bound on a hung browser.
const cdpWait = 60 * time.Second

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

// browser is one headless chromium process.
type browser struct {
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

// chromiumPath finds Debian's chromium (package "chromium"), or "".
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser(t *testing.T, chromium string) *browser {
	t.Helper()
	cmdR, cmdW, err := os.Pipe() // we write commands, chromium reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // chromium writes fd 4, we read
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, in: cmdW, pending: map[int]chan cdpMsg{}, changed: make(chan struct{}, 1), done: make(chan struct{})}
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

func (b *browser) read(r *os.File) {
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
func (b *browser) call(session, method string, params any, out any) {
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
	case <-time.After(cdpWait):
		b.t.Fatalf("%s: no answer from chromium", method)
	}
}

// tab is one page (target) of the browser; all tabs share its cookies.
type tab struct {
	b       *browser
	session string
	seen    int // events before this index are consumed
}

func (b *browser) newTab() *tab {
	b.t.Helper()
	var created struct {
		TargetID string `json:"targetId"`
	}
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &created)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call("", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached)
	tb := &tab{b: b, session: attached.SessionID}
	for _, m := range []string{"Page.enable", "Network.enable", "Runtime.enable"} {
		b.call(tb.session, m, nil, nil)
	}
	return tb
}

// document is the last main-document answer a tab got.
type document struct {
	URL     string            `json:"url"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// act runs do (which starts a navigation) and waits for the page to load;
// it returns the main document's answer.
func (tb *tab) act(do func()) document {
	tb.b.t.Helper()
	tb.b.mu.Lock()
	tb.seen = len(tb.b.events)
	tb.b.mu.Unlock()
	do()
	var doc document
	deadline := time.After(cdpWait)
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
					Response document `json:"response"`
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

func (tb *tab) navigate(url string) document {
	return tb.act(func() { tb.b.call(tb.session, "Page.navigate", map[string]any{"url": url}, nil) })
}

// eval evaluates js in the page and returns its string value.
func (tb *tab) eval(js string) string {
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

// text is the page's visible text.
func (tb *tab) text() string { return tb.eval("document.body ? document.body.innerText : ''") }

// submit fills the named fields of the form holding button and presses
// the button, as a person would; it returns the answer to the post.
func (tb *tab) submit(button string, fields map[string]string) document {
	tb.b.t.Helper()
	var js strings.Builder
	js.WriteString("(() => { const btn = document.querySelector(" + jsString(button) + "); const f = btn.form;")
	for k, v := range fields {
		js.WriteString(" f.elements[" + jsString(k) + "].value = " + jsString(v) + ";")
	}
	js.WriteString(" btn.click(); return 'ok'; })()")
	return tb.act(func() { tb.eval(js.String()) })
}

// screenshot returns a PNG of the tab.
func (tb *tab) screenshot() []byte {
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

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }
