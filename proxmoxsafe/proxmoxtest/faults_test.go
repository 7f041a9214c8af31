package proxmoxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// raw sends a GET with the default token and returns the response and body
// (or the transport error).
func raw(t *testing.T, s *Server, method, path string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, s.URL+"/api2/json"+path, nil)
	req.Header.Set("Authorization", defaultAuth)
	resp, err := s.Client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault Fault
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{"status and reason", Fault{Path: "/version", Status: 596, Reason: "Broken pipe"}, func(t *testing.T, r *http.Response, _ []byte, err error) {
			if err != nil || r.Status != "596 Broken pipe" {
				t.Errorf("got %v %v", r, err)
			}
		}},
		{"malformed body", Fault{Path: "/version", Body: []byte(`{"data": {`)}, func(t *testing.T, r *http.Response, b []byte, err error) {
			if err != nil || r.StatusCode != 200 || json.Valid(b) {
				t.Errorf("got %v %q %v", r, b, err)
			}
		}},
		{"oversized body", Fault{Path: "/version", BodySize: 5 << 20}, func(t *testing.T, r *http.Response, b []byte, err error) {
			if err != nil || len(b) != 5<<20 || !json.Valid(b) {
				t.Errorf("got %d bytes, valid=%v, err %v", len(b), json.Valid(b), err)
			}
		}},
		{"drop", Fault{Path: "/version", Drop: true}, func(t *testing.T, _ *http.Response, _ []byte, err error) {
			if err == nil {
				t.Error("dropped connection gave no error")
			}
		}},
		{"prefix and method", Fault{Method: "GET", Path: "/vers*", Status: 500, Reason: "boom"}, func(t *testing.T, r *http.Response, _ []byte, err error) {
			if err != nil || r.Status != "500 boom" {
				t.Errorf("got %v %v", r, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newDemo(t)
			f := tt.fault
			f.Times = 1
			s.InjectFault(f)
			resp, body, err := raw(t, s, "GET", "/version")
			tt.check(t, resp, body, err)
			// Times: 1 — the next request is normal again.
			if a := get(t, s, "/version"); a.code != 200 {
				t.Errorf("fault still active: %s", a.status)
			}
		})
	}
}

func TestFaultLatencyAndClear(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.InjectFault(Fault{Method: "GET", Path: "/nod*", Latency: 50 * time.Millisecond})
	s.InjectFault(Fault{Method: "POST", Status: 500, Reason: "nope"})
	start := time.Now()
	if a := get(t, s, "/nodes"); a.code != 200 {
		t.Fatalf("latency-only fault changed the answer: %s", a.status)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Error("latency not applied")
	}
	if a := post(t, s, "/nodes/pve1/lxc/200/status/shutdown", nil); a.status != "500 nope" {
		t.Errorf("POST fault: %s", a.status)
	}
	s.ClearFaults()
	if a := post(t, s, "/nodes/pve1/lxc/200/status/shutdown", nil); a.code != 200 {
		t.Errorf("after ClearFaults: %s", a.status)
	}
}

func TestAuthDelay(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(nil)
	s.AuthDelay = 100 * time.Millisecond
	s.StartTLS()
	defer s.Close()
	start := time.Now()
	if a := call(t, s, "GET", "/version", nil, "-"); a.code != 401 {
		t.Fatal(a.status)
	}
	if time.Since(start) < 100*time.Millisecond {
		t.Error("401 not delayed")
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	get(t, s, "/nodes/pve1/qemu/100/status/current")
	call(t, s, "GET", "/version", nil, "-")
	// A JSON body: booleans become "1"/"0", numbers strings.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL+"/api2/json/nodes/pve1/qemu/100/status/shutdown",
		bytes.NewReader([]byte(`{"forceStop":true,"timeout":30}`)))
	req.Header.Set("Authorization", defaultAuth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("JSON body POST: %s", resp.Status)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("logged %d requests", len(reqs))
	}
	if reqs[0].Path != "/nodes/pve1/qemu/100/status/current" || reqs[1].Header.Get("Authorization") != "" {
		t.Errorf("log = %+v", reqs[:2])
	}
	mut := s.MutatingRequests()
	if len(mut) != 1 || mut[0].Form.Get("forceStop") != "1" || mut[0].Form.Get("timeout") != "30" {
		t.Errorf("mutating = %+v", mut)
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 {
		t.Error("ResetRequests kept entries")
	}
}

func TestEscapedPath(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	call(t, s, "GET", "/nodes/pve%2F1/status", nil, "")
	r := s.Requests()[0]
	if r.Path != "/nodes/pve/1/status" || r.RawPath != "/nodes/pve%2F1/status" {
		t.Errorf("Path %q RawPath %q", r.Path, r.RawPath)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(GenerateCluster(3, 30, 7))
	s.TaskPolls = 2
	s.StartTLS()
	defer s.Close()
	ctx := t.Context()
	// Goroutines must not call t.Fatal: they report what they saw, and
	// the test goroutine judges it.
	errs := make(chan error, 8*10*4)
	var stops atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 10 {
				switch (i + j) % 4 {
				case 0:
					a, err := tryCall(ctx, s, http.MethodGet, "/cluster/resources", nil, "")
					if err == nil && (a.code != 200 || len(a.body["data"].([]any)) == 0) {
						err = fmt.Errorf("GET /cluster/resources: %s %s", a.status, a.raw)
					}
					errs <- err
				case 1:
					a, err := tryCall(ctx, s, http.MethodGet, "/nodes/pve1/qemu", nil, "")
					if err == nil && a.code != 200 {
						err = fmt.Errorf("GET /nodes/pve1/qemu: %s %s", a.status, a.raw)
					}
					errs <- err
				case 2:
					a, err := tryCall(ctx, s, http.MethodPost, "/nodes/pve1/qemu/100/status/stop", url.Values{}, "")
					if err != nil {
						errs <- err
						continue
					}
					up, ok := a.body["data"].(string)
					if a.code != 200 || !ok {
						errs <- fmt.Errorf("POST stop: %s %s", a.status, a.raw)
						continue
					}
					stops.Add(1)
					errs <- waitStopped(ctx, s, "pve1", up)
				case 3:
					s.Update(func(c *Cluster) { c.Nodes[1].CPU += 0.01 })
					_, _ = s.Guest(101)
					_ = s.Tasks()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Every stop was logged and became a task that ended, and the guest's
	// state agrees with the tasks: stopped exactly when a stop succeeded.
	if n := len(s.MutatingRequests()); n != int(stops.Load()) || n == 0 {
		t.Errorf("%d mutating requests logged, %d stops answered", n, stops.Load())
	}
	stopTasks, succeeded := 0, 0
	for _, task := range s.Tasks() {
		if task.Status != "stopped" {
			t.Errorf("task %s still %s", task.UPID, task.Status)
		}
		if task.Type == "qmstop" && task.ID == "100" {
			stopTasks++
			if task.ExitStatus == "OK" {
				succeeded++
			}
		}
	}
	if stopTasks != int(stops.Load()) {
		t.Errorf("%d stop tasks for %d stops answered", stopTasks, stops.Load())
	}
	g, _ := s.Guest(100)
	if (g.Status == "stopped") != (succeeded > 0) {
		t.Errorf("guest 100 is %q after %d successful stops of %d", g.Status, succeeded, stopTasks)
	}
}

// waitStopped polls a task until it stops; it returns an error instead of
// failing the test, for use on other goroutines.
func waitStopped(ctx context.Context, s *Server, node, upid string) error {
	for range 100 {
		a, err := tryCall(ctx, s, http.MethodGet, "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", nil, "")
		if err != nil {
			return err
		}
		st, _ := a.body["data"].(map[string]any)
		if a.code != 200 || st == nil {
			return fmt.Errorf("task status %s: %s %s", upid, a.status, a.raw)
		}
		if st["status"] == "stopped" {
			return nil
		}
	}
	return fmt.Errorf("task %s never stopped", upid)
}

func TestTLSIdentity(t *testing.T) {
	t.Parallel()
	a, b := newDemo(t), newDemo(t)
	if a.Fingerprint() == b.Fingerprint() {
		t.Error("two servers share a certificate")
	}
	fp := a.Fingerprint()
	if len(fp) != 95 || strings.ToUpper(fp) != fp || strings.Count(fp, ":") != 31 {
		t.Errorf("fingerprint %q", fp)
	}
	if !strings.Contains(string(a.CertificatePEM()), "BEGIN CERTIFICATE") || a.Certificate() == nil {
		t.Error("certificate accessors")
	}
	nodes := get(t, a, "/nodes").body["data"].([]any)
	if nodes[0].(map[string]any)["ssl_fingerprint"] != fp {
		t.Error("local node ssl_fingerprint is not the server's")
	}
	// A client that does not trust the cert fails.
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	if _, err := cl.Get(a.URL + "/api2/json/version"); err == nil {
		t.Error("untrusted certificate accepted")
	}
}
