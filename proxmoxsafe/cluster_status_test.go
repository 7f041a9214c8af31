package proxmoxsafe_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func nodesByName(r *proxmoxsafe.ClusterStatusResult) map[string]proxmoxsafe.ClusterNode {
	out := map[string]proxmoxsafe.ClusterNode{}
	for _, n := range r.Nodes {
		out[n.Name] = n
	}
	return out
}

// TestClusterStatusUsageAndOfflineNode: a 3-node cluster with pve3 offline
// answers, with usage for the online nodes and a problem for pve3.
func TestClusterStatusUsageAndOfflineNode(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Nodes[0].CPU = 0.5
	e := newEnvWith(t, c, nil)
	r, err := e.client.ClusterStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := nodesByName(r)
	u := n["pve1"].Usage
	if u == nil || u.CPU != 0.5 || u.MaxCPU != 8 || u.Mem != 8<<30 || u.MaxMem != 64<<30 || u.Disk != 10<<30 || u.MaxDisk != 100<<30 || u.Uptime != 3600 || n["pve1"].Problem != "" {
		t.Errorf("pve1 = %+v, usage %+v", n["pve1"], u)
	}
	if n["pve2"].Usage == nil || n["pve2"].Usage.MaxCPU != 4 {
		t.Errorf("pve2 = %+v", n["pve2"])
	}
	if p := n["pve3"]; p.Online || p.Usage != nil || !strings.Contains(p.Problem, "offline") {
		t.Errorf("pve3 = %+v", p)
	}
	if len(r.Warnings) != 0 || r.Warnings == nil {
		t.Errorf("warnings = %v", r.Warnings)
	}
	rs := e.requests() // sent at once: find it by path
	i := slices.IndexFunc(rs, func(r proxmoxtest.Request) bool { return r.Path == "/cluster/resources" })
	if i < 0 {
		t.Fatalf("requests = %v, no /cluster/resources", reqLines(rs))
	}
	if q := rs[i].Query; q.Get("type") != "node" || len(q) != 1 {
		t.Errorf("/cluster/resources query = %v", q)
	}
	// Two of three nodes online: still quorate.
	if !r.Quorate {
		t.Error("2 of 3 nodes online should be quorate")
	}
}

// TestClusterStatusForwardErrors: 595/596 on the secondary reads become
// warnings; the call still succeeds.
func TestClusterStatusForwardErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault proxmoxtest.Fault
		warn  string
	}{
		{"595 on resources", proxmoxtest.Fault{Path: "/cluster/resources", Status: 595, Reason: "No route to host"},
			"per-node usage could not be read: proxmox: GET /cluster/resources: 595 No route to host (Proxmox could not connect to the node it forwarded the request to"},
		{"596 on resources", proxmoxtest.Fault{Path: "/cluster/resources", Status: 596, Reason: "Broken pipe"},
			"596 Broken pipe (Proxmox could not send the request"},
		{"596 on version", proxmoxtest.Fault{Path: "/version", Status: 596, Reason: "Connection reset by peer"},
			"the Proxmox VE version could not be read"},
		{"malformed resources", proxmoxtest.Fault{Path: "/cluster/resources", Status: 200, Body: []byte(`<html>`)},
			"per-node usage could not be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			e.fake.InjectFault(tc.fault)
			r, err := e.client.ClusterStatus(t.Context())
			if err != nil {
				t.Fatalf("ClusterStatus failed: %v", err)
			}
			if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], tc.warn) {
				t.Errorf("warnings = %q, want one containing %q", r.Warnings, tc.warn)
			}
			if len(r.Nodes) != 3 || r.Name != "lab" {
				t.Errorf("result = %+v", r)
			}
			n := nodesByName(r)
			if strings.Contains(tc.name, "resources") {
				if n["pve1"].Usage != nil || !strings.Contains(n["pve1"].Problem, "could not be read") || !strings.Contains(n["pve3"].Problem, "offline") {
					t.Errorf("nodes = %+v", r.Nodes)
				}
			} else if n["pve1"].Usage == nil || r.Version != "" {
				t.Errorf("version failure: nodes %+v, version %q", r.Nodes, r.Version)
			}
		})
	}
}

// TestClusterStatusStillFails: without /cluster/status, with a rejected
// token or an expired context there is nothing to report.
func TestClusterStatusStillFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/status", Status: 500, Reason: "cluster not ready - no quorum?", Times: 1})
	if _, err := e.client.ClusterStatus(t.Context()); err == nil {
		t.Error("a failed /cluster/status did not fail the call")
	}
	// Not a one-shot fault: ClusterStatus sends its three reads at once, and
	// the first call's /cluster/resources, cancelled when /cluster/status
	// failed, can still reach the fake after this fault is set and use it up.
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/resources", Status: 401, Reason: "invalid token value!"})
	if _, err := e.client.ClusterStatus(t.Context()); !errors.Is(err, proxmoxsafe.ErrUnauthorized) {
		t.Errorf("401 on resources: err = %v", err)
	}
	e.fake.ClearFaults()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.client.ClusterStatus(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestClusterStatusWithoutSysAudit: Proxmox leaves usage out for nodes the
// token cannot audit; the node says why.
func TestClusterStatusWithoutSysAudit(t *testing.T) {
	t.Parallel()
	c := testCluster()
	// Sys.Audit on pve1 only; /cluster/status itself needs it on "/", so
	// its answer is injected.
	c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/nodes/pve1": {"Sys.Audit"}, "/vms": {"VM.Audit"}}
	e := newEnvWith(t, c, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/status", Status: 200, Body: []byte(`{"data":[
		{"type":"cluster","name":"lab","quorate":1,"nodes":3,"version":3,"id":"cluster"},
		{"type":"node","name":"pve1","nodeid":1,"online":1,"local":1,"ip":"10.0.0.1","level":""},
		{"type":"node","name":"pve2","nodeid":2,"online":1,"local":0,"ip":"10.0.0.2","level":""},
		{"type":"node","name":"pve3","nodeid":3,"online":0,"local":0,"ip":"10.0.0.3","level":""}]}`)})
	r, err := e.client.ClusterStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := nodesByName(r)
	if n["pve1"].Usage == nil || n["pve2"].Usage != nil || !strings.Contains(n["pve2"].Problem, "Sys.Audit on /nodes/pve2") {
		b, _ := json.Marshal(r)
		t.Errorf("result = %s", b)
	}
}

// TestClusterStatusReadsAtOnce: the three independent reads are in flight
// together. /cluster/status is held by the fake until the caller gives up;
// /version and /cluster/resources must arrive meanwhile (sent one after
// another they never would), and the call still fails with the caller's
// cancellation, having waited for its reads.
func TestClusterStatusReadsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Path: "/cluster/status", Latency: time.Hour, Times: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := e.client.ClusterStatus(ctx)
		done <- err
	}()
	want := []string{"GET /cluster/resources", "GET /cluster/status", "GET /version"}
	for guard := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got := reqLines(e.requests())
		slices.Sort(got)
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(guard) {
			cancel()
			<-done
			t.Fatalf("while /cluster/status was pending the fake saw only %v, want %v", got, want)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestClusterStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res, err := e.client.ClusterStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "lab" || !res.Clustered || !res.Quorate || res.Version != "9.1.1" {
		t.Errorf("result = %+v", res)
	}
	var names []string
	for _, n := range res.Nodes {
		names = append(names, n.Name)
		if n.Name == "pve3" && n.Online {
			t.Error("pve3 should be offline")
		}
		if n.Name == "pve1" && (!n.Online || n.IP != "10.0.0.1" || !n.Local) {
			t.Errorf("pve1 = %+v", n)
		}
	}
	if strings.Join(names, ",") != "pve1,pve2,pve3" {
		t.Errorf("nodes = %v", names)
	}
	got := reqLines(e.requests())
	slices.Sort(got) // sent at once: any order
	if !slices.Equal(got, []string{"GET /cluster/resources", "GET /cluster/status", "GET /version"}) {
		t.Errorf("requests = %v", got)
	}
}

func TestClusterStatusStandalone(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Name = ""
	c.Nodes = c.Nodes[:1]
	e := newEnvWith(t, c, nil)
	res, err := e.client.ClusterStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Clustered || res.Name != "" || !res.Quorate || len(res.Nodes) != 1 {
		t.Errorf("standalone result = %+v", res)
	}
}
