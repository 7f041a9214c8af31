package proxmoxtest

import "testing"

func TestEscapedPath(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	call(t, s, "GET", "/nodes/pve%2F1/status", nil, "")
	r := s.Requests()[0]
	if r.Path != "/nodes/pve/1/status" || r.RawPath != "/nodes/pve%2F1/status" {
		t.Errorf("Path %q RawPath %q", r.Path, r.RawPath)
	}
}
