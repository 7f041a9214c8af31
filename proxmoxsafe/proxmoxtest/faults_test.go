package proxmoxtest

import (
	"encoding/json"
	"io"
	"net/http"
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
