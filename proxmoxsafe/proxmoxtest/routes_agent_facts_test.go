package proxmoxtest

import (
	"strings"
	"testing"
	"time"
)

// TestAgentReads: every agent GET runs qemu-server's checks in their order
// (config, agent configured, VM running, agent answering) and answers
// {"data":{"result":…}} with the raw QGA return.
func TestAgentReads(t *testing.T) {
	t.Parallel()
	s := NewUnstartedServer(agentCluster())
	s.AgentTimeout = 20 * time.Millisecond
	s.StartTLS()
	t.Cleanup(s.Close)
	for _, cmd := range []string{"network-get-interfaces", "get-osinfo", "get-host-name", "get-fsinfo", "get-time"} {
		for _, tt := range []struct {
			vmid, status string
		}{
			{"100", "200 OK"},
			{"101", "500 QEMU guest agent is not running"},
			{"102", "500 No QEMU guest agent configured"},
			{"103", "500 VM 103 is not running"},
			{"104", "500 QEMU guest agent is not running"},
			{"999", "500 Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist"},
		} {
			path := "/nodes/pve1/qemu/" + tt.vmid + "/agent/" + cmd
			if a := get(t, s, path); a.status != tt.status {
				t.Errorf("GET %s: %q, want %q", path, a.status, tt.status)
			}
		}
		if a := get(t, s, "/nodes/pve1/lxc/200/agent/"+cmd); a.code != 501 {
			t.Errorf("GET …/lxc/200/agent/%s: %q, want 501 (containers have no agent)", cmd, a.status)
		}
	}
	result := func(cmd string) any {
		t.Helper()
		a := get(t, s, "/nodes/pve1/qemu/100/agent/"+cmd)
		data, ok := a.body["data"].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s, want {\"data\":{\"result\":…}}", cmd, a.raw)
		}
		return data["result"]
	}
	if ns, ok := result("get-time").(float64); !ok || time.Since(time.Unix(0, int64(ns))).Abs() > time.Minute {
		t.Errorf("get-time result = %v, want nanoseconds since the epoch, now", result("get-time"))
	}
	if hn := result("get-host-name").(map[string]any)["host-name"]; hn != "alive" {
		t.Errorf("host-name = %v", hn)
	}
	os := result("get-osinfo").(map[string]any)
	for _, k := range []string{"id", "name", "pretty-name", "version", "version-id", "kernel-release", "kernel-version", "machine"} {
		if _, ok := os[k].(string); !ok {
			t.Errorf("get-osinfo lacks %q: %v", k, os)
		}
	}
	fs := result("get-fsinfo").([]any)
	root := fs[0].(map[string]any)
	for _, k := range []string{"name", "mountpoint", "type", "used-bytes", "total-bytes", "disk"} {
		if _, ok := root[k]; !ok {
			t.Errorf("get-fsinfo entry lacks %q: %v", k, root)
		}
	}
}

// TestAgentReadsPermission: PVE 9 wants VM.GuestAgent.Audit (or
// .Unrestricted), PVE 8 VM.Monitor, on the guest.
func TestAgentReadsPermission(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, priv, want string
	}{
		{"9.1.1", "VM.Audit", "403 Permission check failed (/vms/100, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted)"},
		{"9.1.1", "VM.GuestAgent.Audit", "200 OK"},
		{"8.4.1", "VM.GuestAgent.Audit", "403 Permission check failed (/vms/100, VM.Monitor)"},
		{"8.4.1", "VM.Monitor", "200 OK"},
	} {
		c := agentCluster()
		c.Version = tt.version
		c.Tokens = map[string]*Token{DefaultTokenID: {Secret: DefaultTokenSecret, Privileges: map[string][]string{"/": {tt.priv}}}}
		s := NewServer(c)
		t.Cleanup(s.Close)
		if a := get(t, s, "/nodes/pve1/qemu/100/agent/network-get-interfaces"); a.status != tt.want {
			t.Errorf("%s with %s: %q, want %q", tt.version, tt.priv, a.status, tt.want)
		}
	}
}

// TestAgentInterfacesShape: the derived answer has the recorded shape
// (pve6 agent-network-get-interfaces.json): lo first, then the NIC with
// net0's MAC and its EUI-64 link-local address.
func TestAgentInterfacesShape(t *testing.T) {
	t.Parallel()
	s := NewServer(agentCluster())
	t.Cleanup(s.Close)
	got := get(t, s, "/nodes/pve1/qemu/100/agent/network-get-interfaces").body["data"].(map[string]any)
	rec := loadRecording(t, "pve6/agent-network-get-interfaces.json").(map[string]any)
	compareShape(t, "network-get-interfaces", rec, got, nil)
	nics := got["result"].([]any)
	recNICs := rec["result"].([]any)
	for i := range recNICs {
		compareShape(t, "interface", recNICs[i].(map[string]any), nics[i].(map[string]any), nil)
		recAddr := recNICs[i].(map[string]any)["ip-addresses"].([]any)[0].(map[string]any)
		compareShape(t, "address", recAddr, nics[i].(map[string]any)["ip-addresses"].([]any)[0].(map[string]any), nil)
	}
	nic := nics[1].(map[string]any)
	if nic["hardware-address"] != "bc:24:11:00:00:64" {
		t.Errorf("MAC = %v, want net0's (BC:24:11:00:00:64) as qemu-ga writes it", nic["hardware-address"])
	}
	var addrs []string
	for _, a := range nic["ip-addresses"].([]any) {
		addrs = append(addrs, a.(map[string]any)["ip-address"].(string))
	}
	if strings.Join(addrs, " ") != "10.0.0.100 fe80::be24:11ff:fe00:64" {
		t.Errorf("addresses = %v", addrs)
	}
}

// TestAgentCommandMissing: an agent that does not know get-osinfo (an old
// Windows qemu-ga) fails only that command, as qemu-server words it.
func TestAgentCommandMissing(t *testing.T) {
	t.Parallel()
	c := agentCluster()
	c.Guests[0].Agent = &AgentFacts{HostName: "WIN-01"}
	s := NewServer(c)
	t.Cleanup(s.Close)
	if a := get(t, s, "/nodes/pve1/qemu/100/agent/get-osinfo"); a.status != "500 VM 100 qga command 'guest-get-osinfo' failed - The command guest-get-osinfo has not been found" {
		t.Errorf("get-osinfo: %q", a.status)
	}
	if a := get(t, s, "/nodes/pve1/qemu/100/agent/get-host-name"); a.code != 200 {
		t.Errorf("get-host-name: %q", a.status)
	}
}
