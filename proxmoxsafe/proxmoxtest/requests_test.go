package proxmoxtest

import (
	"bytes"
	"net/http"
	"testing"
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
