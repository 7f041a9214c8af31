package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestGuestAddressesTool: over MCP against the demo cluster, the running
// guests' addresses, a guest without agent and one on a node off the
// allowlist reported inline, a stopped container by VMID.
func TestGuestAddressesTool(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			f := newFixture(t, ctx, pv, fixtureConfig{})
			res := f.call(t, ctx, ToolGuestAddresses, map[string]any{})
			if res.IsError {
				t.Fatalf("error: %s", text(t, res))
			}
			var out proxmoxsafe.GuestAddressesResult
			structured(t, res, &out)
			got := map[int]proxmoxsafe.GuestAddresses{}
			for _, g := range out.Guests {
				got[g.VMID] = g
			}
			if web := got[100]; web.Source != "agent" || len(web.Interfaces) != 2 || !slices.Equal(web.Interfaces[0].IPv4, []string{"192.168.10.21/24"}) {
				t.Errorf("web-01: %+v", web)
			}
			if got[102].Unavailable != "agent_not_configured" || got[106].Unavailable != "node_not_allowed" {
				t.Errorf("db-01 %q, monitoring %q", got[102].Unavailable, got[106].Unavailable)
			}
			if dns := got[200]; dns.Source != "container" || !slices.Equal(dns.Interfaces[0].IPv4, []string{"192.168.10.53/24"}) {
				t.Errorf("dns-01: %+v", dns)
			}
			if _, listed := got[202]; listed || out.NotRunning == 0 {
				t.Errorf("the stopped container is listed (%v) or not counted (%d)", listed, out.NotRunning)
			}
			summary := strings.SplitN(text(t, res), "\n", 2)[0]
			if !strings.HasPrefix(summary, "Addresses of ") || !strings.Contains(summary, "agent_not_configured 2") || !strings.Contains(summary, "not running, not read") {
				t.Errorf("summary = %q", summary)
			}
			for _, r := range f.fake.Requests() {
				if r.Method != "GET" || strings.Contains(r.Path, "/pve3/") {
					t.Errorf("sent %s %s", r.Method, r.Path)
				}
			}

			res = f.call(t, ctx, ToolGuestAddresses, map[string]any{"vmid": 202})
			if s := text(t, res); !strings.HasPrefix(s, "container 202 (backup-agent) on pve3: no addresses: node_not_allowed") {
				t.Errorf("backup-agent: %q", s)
			}
			res = f.call(t, ctx, ToolGuestAddresses, map[string]any{"vmid": 103})
			if s := text(t, res); !strings.HasPrefix(s, "VM 103 (build-runner) on pve2: no addresses: stopped") {
				t.Errorf("build-runner: %q", s)
			}
			res = f.call(t, ctx, ToolGuestAddresses, map[string]any{"vmid": 101})
			if s := text(t, res); !strings.HasPrefix(s, "VM 101 (web-02) on pve1: 192.168.10.22/24, 2001:db8:10::22/64, fe80::be24:11ff:fe00:65/64 (from agent)") {
				t.Errorf("web-02: %q", s)
			}
		})
	}
}

// TestGuestAddressesStoppedContainer: a stopped container on an allowed
// node is reported as stopped, with no request for it.
func TestGuestAddressesStoppedContainer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pol := defaultPolicy()
	pol.AllowedNodes = []string{"pve1", "pve2", "pve3"}
	f := newFixture(t, ctx, "", fixtureConfig{policy: &pol})
	f.fake.ResetRequests()
	res := f.call(t, ctx, ToolGuestAddresses, map[string]any{"vmid": 202})
	if s := text(t, res); !strings.HasPrefix(s, "container 202 (backup-agent) on pve3: no addresses: stopped") {
		t.Errorf("backup-agent: %q", s)
	}
	for _, r := range f.fake.Requests() {
		if strings.Contains(r.Path, "/202") {
			t.Errorf("sent %s %s for a stopped container", r.Method, r.Path)
		}
	}
}

// TestGuestInsightReadOnly: both tools are reads every profile offers,
// read-only mode included.
func TestGuestInsightReadOnly(t *testing.T) {
	t.Parallel()
	var names []string
	for _, ti := range Tools(nil, &Options{ReadOnly: true}) {
		names = append(names, ti.Name)
	}
	for _, want := range []string{ToolGuestAddresses, ToolGuestAgentInfo} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not offered in read-only mode: %v", want, names)
		}
	}
}

// TestGuestAddressesLargeCluster: on the 10,000-guest fixture the largest
// page (200 guests) stays within the bounds list_guests is held to.
func TestGuestAddressesLargeCluster(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f, _ := largeClusterFixture(t) // large_cluster_test.go
	res := f.call(t, ctx, ToolGuestAddresses, map[string]any{"limit": proxmoxsafe.MaxAddressesLimit})
	var out proxmoxsafe.GuestAddressesResult
	structured(t, res, &out)
	js, txt := len(mustJSON(t, res.StructuredContent)), len(text(t, res))
	if js > 64<<10 || txt > 64<<10 {
		t.Errorf("structured %d B, text %d B: want at most 64 KiB each", js, txt)
	}
	if len(out.Guests) == 0 || out.NextCursor == "" || out.Total < 5000 {
		t.Errorf("%d guests of %d, cursor %q", len(out.Guests), out.Total, out.NextCursor)
	}
	t.Logf("guest_addresses, 10,000 guests, limit 200: %d guests of %d running, structured %d B, text %d B", len(out.Guests), out.Total, js, txt)
}
