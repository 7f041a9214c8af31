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
