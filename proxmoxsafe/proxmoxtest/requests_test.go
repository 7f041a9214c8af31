package proxmoxtest

import (
	"bytes"
	"net/http"
	"sync"
	"testing"
	"time"
)

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

func TestRequestLogLimit(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(nil)
	s.RequestLogLimit = 3
	s.StartTLS()
	defer s.Close()
	for range 10 {
		get(t, s, "/version")
	}
	post(t, s, "/nodes/pve1/qemu/100/status/stop", nil)
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[2].Method != "POST" || reqs[0].Path != "/version" {
		t.Errorf("log = %v", reqs)
	}
	if m := s.MutatingRequests(); len(m) != 1 {
		t.Errorf("mutating = %v", m)
	}
	s.reqMu.Lock()
	held := cap(s.requests)
	s.reqMu.Unlock()
	if held > 2*3+8 {
		t.Errorf("the log holds %d entries' room for a limit of 3", held)
	}
}

// TestSequentialDepth counts chains of requests, each started after the
// one before ended, from the logged times alone.
func TestSequentialDepth(t *testing.T) {
	t.Parallel()
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	req := func(start, end int) Request {
		r := Request{Start: at(start)}
		if end >= 0 {
			r.End = at(end)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		reqs []Request
		want int
	}{
		{"none", nil, 0},
		{"one", []Request{req(0, 25)}, 1},
		{"at once", []Request{req(0, 25), req(1, 26), req(2, 27)}, 1},
		{"one after another", []Request{req(0, 25), req(25, 50), req(51, 76)}, 3},
		{"reads at once, then the write", []Request{req(0, 25), req(1, 26), req(27, 52)}, 2},
		// Out of order in the log, and a long read overlapping two short
		// ones in a row: the longest chain counts.
		{"longest chain", []Request{req(30, 55), req(0, 60), req(0, 25), req(61, 86)}, 3},
		{"still running", []Request{req(0, -1), req(10, 20), req(30, 40)}, 2},
	} {
		if got := SequentialDepth(tt.reqs); got != tt.want {
			t.Errorf("%s: depth %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestLatency delays every request, logs when each started and ended,
// and requests sent at once overlap.
func TestLatency(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(nil)
	s.Latency = 100 * time.Millisecond
	s.StartTLS()
	defer s.Close()
	start := time.Now()
	get(t, s, "/version")
	if time.Since(start) < s.Latency {
		t.Error("latency not applied")
	}
	get(t, s, "/nodes")
	// Two at once: the test client keeps two idle connections (a third
	// would wait for a TLS handshake, which a loaded machine may make
	// longer than the latency); the first pair opens the second.
	burst := func() {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { get(t, s, "/cluster/status") })
		}
		wg.Wait()
	}
	burst()
	burst()
	reqs := s.Requests()
	for _, r := range reqs {
		if r.Start.IsZero() || r.End.Before(r.Start.Add(s.Latency)) {
			t.Errorf("%s %s: start %v, end %v", r.Method, r.Path, r.Start, r.End)
		}
	}
	if d := SequentialDepth(reqs[:2]); d != 2 {
		t.Errorf("two requests in a row: depth %d, want 2", d)
	}
	if d := SequentialDepth(reqs[4:]); d != 1 {
		t.Errorf("two requests at once: depth %d, want 1", d)
	}
}
