package proxmoxtest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// agentCluster has one qemu guest per agent situation, and a container.
func agentCluster() *Cluster {
	return &Cluster{
		Name:  "lab",
		Nodes: []*Node{{Name: "pve1", Online: true}},
		Guests: []*Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "alive", Status: "running", AgentEnabled: true, Uptime: 7200},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "hung", Status: "running", AgentEnabled: true, AgentHung: true},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "noagent", Status: "running"},
			{VMID: 103, Node: "pve1", Type: "qemu", Name: "off", Status: "stopped", AgentEnabled: true},
			{VMID: 104, Node: "pve1", Type: "qemu", Name: "paused", Status: "running", Paused: true, AgentEnabled: true},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Pool: "prod-pool"},
		},
	}
}

func TestAgentPing(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(agentCluster())
	s.AgentTimeout = 20 * time.Millisecond
	s.StartTLS()
	t.Cleanup(s.Close)
	tests := []struct {
		path   string
		status string
	}{
		{"/nodes/pve1/qemu/100/agent/ping", "200 OK"},
		{"/nodes/pve1/qemu/101/agent/ping", "500 QEMU guest agent is not running"},
		{"/nodes/pve1/qemu/102/agent/ping", "500 No QEMU guest agent configured"},
		{"/nodes/pve1/qemu/103/agent/ping", "500 VM 103 is not running"},
		{"/nodes/pve1/qemu/104/agent/ping", "500 QEMU guest agent is not running"},
		{"/nodes/pve1/qemu/999/agent/ping", "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist"},
		// LXC has no guest agent endpoint at all.
		{"/nodes/pve1/lxc/200/agent/ping", "501 Method 'POST /nodes/pve1/lxc/200/agent/ping' not implemented"},
	}
	for _, tt := range tests {
		a := post(t, s, tt.path, nil)
		if a.status != tt.status {
			t.Errorf("POST %s: %q, want %q", tt.path, a.status, tt.status)
		}
	}
	a := post(t, s, "/nodes/pve1/qemu/100/agent/ping", nil)
	if res, ok := a.body["data"].(map[string]any)["result"].(map[string]any); !ok || len(res) != 0 {
		t.Errorf("ping answer = %s, want {\"data\":{\"result\":{}}}", a.raw)
	}
	// Unknown parameters are refused like everywhere (additionalProperties 0).
	if a := post(t, s, "/nodes/pve1/qemu/100/agent/ping", url.Values{"timeout": {"1"}}); a.code != 400 {
		t.Errorf("ping with timeout param: %q", a.status)
	}
}

// A hung agent keeps the request waiting without blocking the server: a
// client that gives up sees its own timeout, and other requests are served
// meanwhile.
func TestAgentPingHangsWithoutBlocking(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(agentCluster())
	s.AgentTimeout = time.Hour
	s.StartTLS()
	t.Cleanup(s.Close)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api2/json/nodes/pve1/qemu/101/agent/ping", strings.NewReader(""))
		req.Header.Set("Authorization", defaultAuth)
		resp, err := s.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	// The hanging ping must not hold the model lock: a write still goes through.
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	upidOf(t, post(t, s, "/nodes/pve1/qemu/100/status/reboot", nil))
	select {
	case err := <-done:
		t.Fatalf("hung ping answered early: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ping: %v, want context.Canceled", err)
	}
}

func TestAgentPingPermission(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, priv, status string
	}{
		{"9.1.1", "VM.GuestAgent.Audit", "200 OK"},
		{"9.1.1", "VM.GuestAgent.Unrestricted", "200 OK"},
		{"9.1.1", "VM.Monitor", "403 Permission check failed (/vms/100, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted)"},
		{"8.4.1", "VM.Monitor", "200 OK"},
		{"8.4.1", "VM.GuestAgent.Audit", "403 Permission check failed (/vms/100, VM.Monitor)"},
	} {
		c := agentCluster()
		c.Version = tt.version
		c.Tokens = map[string]*Token{"u@pve!t": {Secret: "s", Privileges: map[string][]string{"/vms/100": {tt.priv}}}}
		s := NewServer(c)
		a := call(t, s, http.MethodPost, "/nodes/pve1/qemu/100/agent/ping", url.Values{}, tokenAuth("u@pve!t", "s"))
		s.Close()
		if a.status != tt.status {
			t.Errorf("%s with %s: %q, want %q", tt.version, tt.priv, a.status, tt.status)
		}
	}
}

func snapCluster() *Cluster {
	return &Cluster{
		Name:  "lab",
		Nodes: []*Node{{Name: "pve1", Online: true}},
		Guests: []*Guest{
			{VMID: 100, Node: "pve1", Type: "qemu", Name: "vm", Status: "running", Snapshots: []*Snapshot{
				{Name: "aa", SnapTime: 1700000000},
				{Name: "bb", Parent: "aa", SnapTime: 1700000100, Description: "cv4pve-autosnap"},
				{Name: "cc", Parent: "bb", SnapTime: 1700000200},
			}},
			{VMID: 101, Node: "pve1", Type: "qemu", Name: "tmpl", Status: "stopped", Template: true, Snapshots: []*Snapshot{{Name: "aa", SnapTime: 1700000000}}},
			{VMID: 102, Node: "pve1", Type: "qemu", Name: "locked", Status: "running", Lock: "backup", Snapshots: []*Snapshot{{Name: "aa", SnapTime: 1700000000}}},
			{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "running", Snapshots: []*Snapshot{{Name: "xx", SnapTime: 1700000000}}},
		},
	}
}

func del(t *testing.T, s *Server, path string) answer {
	t.Helper()
	return call(t, s, http.MethodDelete, path, nil, "")
}

func snapParents(t *testing.T, s *Server, path string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, e := range get(t, s, path).body["data"].([]any) {
		m := e.(map[string]any)
		out[m["name"].(string)] = m["parent"]
	}
	return out
}

func TestSnapshotDelete(t *testing.T) {
	t.Parallel()
	s := NewServer(snapCluster())
	t.Cleanup(s.Close)

	// The middle snapshot: a task; its child moves to its parent.
	up := upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/bb"))
	if !strings.Contains(up, ":qmdelsnapshot:100:") {
		t.Errorf("UPID %s is not a qmdelsnapshot task of 100", up)
	}
	if g, _ := s.Guest(100); len(g.Snapshots) != 3 {
		t.Error("the snapshot went before its task ended")
	}
	if st, _ := pollUntilStopped(t, s, "pve1", up); st["exitstatus"] != "OK" {
		t.Fatalf("task: %v", st)
	}
	if p := snapParents(t, s, "/nodes/pve1/qemu/100/snapshot"); len(p) != 3 || p["cc"] != "aa" || p["current"] != "cc" {
		t.Errorf("after deleting bb: parents %v, want cc on aa, current on cc", p)
	}
	// The snapshot the current state is based on: current moves to its parent.
	up = upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/cc"))
	pollUntilStopped(t, s, "pve1", up)
	if p := snapParents(t, s, "/nodes/pve1/qemu/100/snapshot"); len(p) != 2 || p["current"] != "aa" {
		t.Errorf("after deleting cc: parents %v, want current on aa", p)
	}
	// LXC: vzdelsnapshot.
	up = upidOf(t, del(t, s, "/nodes/pve1/lxc/200/snapshot/xx"))
	if !strings.Contains(up, ":vzdelsnapshot:200:") {
		t.Errorf("UPID %s is not a vzdelsnapshot task", up)
	}
	pollUntilStopped(t, s, "pve1", up)
	if g, _ := s.Guest(200); len(g.Snapshots) != 0 {
		t.Errorf("lxc snapshots left: %v", g.Snapshots)
	}
}

// Every check of snapshot_delete runs in the worker: the DELETE answers a
// UPID and the task fails, changing nothing.
func TestSnapshotDeleteFailsInTask(t *testing.T) {
	t.Parallel()
	s := NewServer(snapCluster())
	t.Cleanup(s.Close)
	for _, tt := range []struct{ path, exit string }{
		{"/nodes/pve1/qemu/100/snapshot/nope", "snapshot 'nope' does not exist"},
		{"/nodes/pve1/qemu/100/snapshot/current", "snapshot 'current' does not exist"},
		{"/nodes/pve1/qemu/101/snapshot/aa", "you can't delete a snapshot if vm is a template"},
		{"/nodes/pve1/qemu/102/snapshot/aa", "VM is locked (backup)"},
	} {
		up := upidOf(t, del(t, s, tt.path))
		st, _ := pollUntilStopped(t, s, "pve1", up)
		if st["exitstatus"] != tt.exit {
			t.Errorf("DELETE %s: exit %v, want %q", tt.path, st["exitstatus"], tt.exit)
		}
		if log := taskLog(t, s, "pve1", up); log[len(log)-1] != "TASK ERROR: "+tt.exit {
			t.Errorf("DELETE %s: log %v", tt.path, log)
		}
	}
	// A storage failure inside the task (FailNextTask) keeps the snapshot.
	s.FailNextTask("zfs error: cannot destroy snapshot: dataset is busy")
	up := upidOf(t, del(t, s, "/nodes/pve1/qemu/100/snapshot/aa"))
	if st, _ := pollUntilStopped(t, s, "pve1", up); st["exitstatus"] != "zfs error: cannot destroy snapshot: dataset is busy" {
		t.Errorf("forced failure: %v", st)
	}
	if g, _ := s.Guest(100); len(g.Snapshots) != 3 {
		t.Errorf("failed deletion changed the model: %d snapshots", len(g.Snapshots))
	}
	// Synchronous errors: the guest must exist; the name must be a configid.
	if a := del(t, s, "/nodes/pve1/qemu/999/snapshot/aa"); a.code != 500 || !strings.Contains(a.status, "999.conf' does not exist") {
		t.Errorf("unknown guest: %q", a.status)
	}
	if a := del(t, s, "/nodes/pve1/qemu/100/snapshot/1bad"); a.code != 400 {
		t.Errorf("bad name: %q", a.status)
	}
	if a := get(t, s, "/nodes/pve1/qemu/100/snapshot/aa"); a.code != 501 {
		t.Errorf("GET on a snapshot (its index) is not modelled: %q", a.status)
	}
}

func TestPoolInResources(t *testing.T) {
	t.Parallel()
	s := NewServer(agentCluster())
	t.Cleanup(s.Close)
	for _, e := range get(t, s, "/cluster/resources?type=vm").body["data"].([]any) {
		m := e.(map[string]any)
		want := map[float64]any{200: "prod-pool"}[m["vmid"].(float64)]
		if m["pool"] != want {
			t.Errorf("guest %v: pool %v, want %v", m["vmid"], m["pool"], want)
		}
	}
}
