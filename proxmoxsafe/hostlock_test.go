//go:build unix

package proxmoxsafe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// hostLockChildEnv carries the child's instructions (JSON hostLockSpec).
const hostLockChildEnv = "PROXMOXSAFE_TEST_HOSTLOCK_CHILD"

type hostLockSpec struct {
	URL     string // the gate in front of the fake
	LockDir string // "" for no host-wide lock
	Name    string // sent as the User-Agent, so the gate can tell the processes apart
}

// TestHostLockChild is the process TestHostLockTwoProcesses starts twice:
// it asks to start guest 103 once, as a `call` would, and prints what
// happened. Run directly it does nothing.
func TestHostLockChild(t *testing.T) {
	raw := os.Getenv(hostLockChildEnv)
	if raw == "" {
		t.Skip("helper process of TestHostLockTwoProcesses")
	}
	var spec hostLockSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	c, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL:               spec.URL,
		TokenID:           proxmoxtest.DefaultTokenID,
		TokenSecret:       proxmoxtest.DefaultTokenSecret,
		AllowInsecureHTTP: true, // the test's gate speaks plain HTTP on loopback
		Policy:            proxmoxsafe.Policy{AllowedNodes: []string{"pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassPower}},
		Audit:             auditlog.New(io.Discard, nil),
		LockDir:           spec.LockDir,
		UserAgent:         spec.Name,
		// No keep-alive: nothing may be left running when goleak checks.
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	_, err = c.GuestPower(t.Context(), powerIn("pve2", "qemu", 103, proxmoxsafe.ActionStart))
	result := "SENT"
	if err != nil {
		result = err.Error()
	}
	fmt.Println("HOSTLOCK-RESULT " + result)
}

// hostLockGate holds the answer to the active-task check (the last read
// before the POST) of every process until both processes have had theirs
// answered, or one of them has ended. That turns "two processes race" into
// a certainty without relying on timing: without a host-wide lock both
// are told "no task running" and then both send; with it the second is
// refused before it reads anything, ends, and lets the first go on.
type hostLockGate struct {
	mu   sync.Mutex
	seen map[string]bool // processes (by User-Agent) held so far
	open chan struct{}
	once sync.Once
}

func (g *hostLockGate) release() { g.once.Do(func() { close(g.open) }) }

func (g *hostLockGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/tasks") || r.URL.Query().Get("source") != "active" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r) // the answer as of now: no task yet
		g.mu.Lock()
		g.seen[r.UserAgent()] = true
		if len(g.seen) == 2 {
			g.release()
		}
		g.mu.Unlock()
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
}

// runHostLockRace starts two child processes against one fake and returns
// their outputs and the fake's mutating requests.
func runHostLockRace(t *testing.T, lockDir string) ([]string, []proxmoxtest.Request) {
	t.Helper()
	fake := proxmoxtest.NewServer(nil)
	defer fake.Close()
	target, err := url.Parse(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = fake.Client().Transport
	gate := &hostLockGate{open: make(chan struct{}), seen: map[string]bool{}}
	front := httptest.NewServer(gate.wrap(proxy))
	defer front.Close()
	defer gate.release()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang must not hang the suite
	defer cancel()
	outs := make([]bytes.Buffer, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		spec, _ := json.Marshal(hostLockSpec{URL: front.URL, LockDir: lockDir, Name: fmt.Sprintf("child-%d", i)})
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostLockChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), hostLockChildEnv+"="+string(spec))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v\n%s", i, err, outs[i].String())
			}
			gate.release() // one process is done: the other may go on
		})
	}
	wg.Wait()
	var results []string
	for i := range outs {
		for line := range strings.Lines(outs[i].String()) {
			if r, ok := strings.CutPrefix(strings.TrimSpace(line), "HOSTLOCK-RESULT "); ok {
				results = append(results, r)
			}
		}
	}
	if len(results) != 2 {
		t.Fatalf("want a result from each child, got %q\n%s\n%s", results, outs[0].String(), outs[1].String())
	}
	return results, fake.MutatingRequests()
}

// TestHostLockTwoProcesses: two processes on one host (two `call`s, or two
// servers) must not both change one guest at the same moment. With a shared LockDir exactly one POST reaches Proxmox and the
// other process is told another process is changing the guest.
func TestHostLockTwoProcesses(t *testing.T) {
	t.Parallel()
	results, posts := runHostLockRace(t, t.TempDir())
	if len(posts) != 1 {
		t.Fatalf("%d mutating requests, want exactly 1: %v (children: %q)", len(posts), reqLines(posts), results)
	}
	sent, refused := 0, 0
	for _, r := range results {
		switch {
		case r == "SENT":
			sent++
		case strings.Contains(r, "being changed by another process on this host") && strings.Contains(r, "no action was taken"):
			refused++
		}
	}
	if sent != 1 || refused != 1 {
		t.Errorf("results = %q, want one sent and one refused by the host lock", results)
	}
}

// TestHostLockTwoProcessesWithoutLockDir shows what the lock prevents:
// without it the same race sends two POSTs (the in-process guard cannot
// see the other process).
func TestHostLockTwoProcessesWithoutLockDir(t *testing.T) {
	t.Parallel()
	results, posts := runHostLockRace(t, "")
	if len(posts) != 2 {
		t.Fatalf("%d mutating requests without a lock dir, want 2 (the race this guards against): %q", len(posts), results)
	}
}
