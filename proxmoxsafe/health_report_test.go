package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func kindsOf(res *proxmoxsafe.HealthReportResult) map[string][]proxmoxsafe.HealthFinding {
	out := map[string][]proxmoxsafe.HealthFinding{}
	for _, f := range res.Findings {
		out[f.Kind] = append(out[f.Kind], f)
	}
	return out
}

// TestHealthReport: on healthCluster (pve3 offline) the report finds the
// offline node, the failing replication, the degraded pool, the failing
// and the worn disk, the failed service, the pending updates, old
// snapshots and a running VM without agent; it sends only GETs, bounds
// the per-guest reads and says so, and honours the thresholds.
func TestHealthReport(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, healthCluster(), func(c *proxmoxsafe.Config) {
		c.Health = proxmoxsafe.HealthThresholds{MaxGuestReads: 2, SnapshotMaxAgeDays: 1}
	})
	res, err := e.client.HealthReport(t.Context(), proxmoxsafe.HealthReportInput{})
	if err != nil {
		t.Fatal(err)
	}
	k := kindsOf(res)
	for _, want := range []string{"node-offline", "replication", "zfs", "disk-smart", "disk-wearout", "service", "updates", "agent-disabled", "not-checked"} {
		if len(k[want]) == 0 {
			t.Errorf("no %s finding: %+v", want, res.Findings)
		}
	}
	if f := k["node-offline"][0]; f.Severity != proxmoxsafe.SeverityCritical || f.Subject != "node pve3" || f.Tool != "cluster_status" {
		t.Errorf("offline = %+v", f)
	}
	if f := k["replication"][0]; f.Severity != proxmoxsafe.SeverityCritical || !strings.Contains(f.Evidence, "failed 3 times") {
		t.Errorf("replication = %+v", f)
	}
	bounded := false
	for _, f := range k["not-checked"] {
		bounded = bounded || strings.Contains(f.Evidence, "guests not checked for old snapshots: a report reads at most 2")
	}
	if !bounded {
		t.Errorf("the bound on guest reads is not reported: %+v", k["not-checked"])
	}
	snapshotReads, configReads := 0, 0
	for _, r := range e.requests() {
		if r.Method != "GET" {
			t.Errorf("non-GET request %s %s", r.Method, r.Path)
		}
		switch {
		case strings.HasSuffix(r.Path, "/snapshot"):
			snapshotReads++
		case strings.HasSuffix(r.Path, "/config"):
			configReads++
		}
	}
	if snapshotReads > 2 || configReads > 2 {
		t.Errorf("%d snapshot and %d config reads, bound 2", snapshotReads, configReads)
	}
	if res.Total != len(res.Findings) || res.Critical+res.Warning+res.Info != res.Total {
		t.Errorf("counts %+v", res)
	}
	for i := 1; i < len(res.Findings); i++ {
		if rank := map[string]int{"critical": 0, "warning": 1, "info": 2}; rank[res.Findings[i-1].Severity] > rank[res.Findings[i].Severity] {
			t.Errorf("not sorted at %d: %+v", i, res.Findings[i-1:i+1])
		}
	}
	// MinSeverity and Limit.
	res, err = e.client.HealthReport(t.Context(), proxmoxsafe.HealthReportInput{MinSeverity: "critical", Limit: 1})
	if err != nil || len(res.Findings) != 1 || res.Total < 2 || res.Warning != 0 || res.Info != 0 {
		t.Errorf("critical only, limit 1: %+v, %v", res, err)
	}
}

// TestHealthReportDegrades: a token with VM.Audit only gets an answer
// whose unread checks are info findings, and a cluster without quorum is
// critical.
func TestHealthReportDegrades(t *testing.T) {
	t.Parallel()
	c := healthCluster()
	c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/vms": {"VM.Audit"}}
	e := newEnvWith(t, c, nil)
	res, err := e.client.HealthReport(t.Context(), proxmoxsafe.HealthReportInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scope != "pve1" || len(kindsOf(res)["not-checked"]) == 0 || res.Critical != 0 {
		t.Errorf("restricted: %+v", res)
	}
	for _, f := range res.Findings {
		if f.Kind != "not-checked" && f.Kind != "snapshot-old" && f.Kind != "agent-disabled" {
			t.Errorf("finding from a read the token may not make: %+v", f)
		}
	}

	c = healthCluster()
	e = newEnvWith(t, c, nil)
	e.fake.Update(func(c *proxmoxtest.Cluster) {
		for _, n := range c.Nodes[1:] {
			n.Online = false
		}
	})
	res, err = e.client.HealthReport(t.Context(), proxmoxsafe.HealthReportInput{})
	if err != nil || len(kindsOf(res)["not-quorate"]) != 1 {
		t.Errorf("no quorum: %+v, %v", res, err)
	}
}

// TestHealthReportRefusals: a bad input or a node off the allowlist sends
// nothing; thresholds out of range are refused by New.
func TestHealthReportRefusals(t *testing.T) {
	t.Parallel()
	for _, in := range []proxmoxsafe.HealthReportInput{{Node: "pve3"}, {Node: "-x"}, {MinSeverity: "fatal"}, {Limit: 5000}} {
		e := newEnvWith(t, healthCluster(), nil)
		if _, err := e.client.HealthReport(t.Context(), in); err == nil {
			t.Errorf("%+v accepted", in)
		}
		if n := len(e.requests()); n != 0 {
			t.Errorf("%+v: %d requests", in, n)
		}
	}
	for _, h := range []proxmoxsafe.HealthThresholds{{StorageWarnPercent: 95}, {StorageCriticalPercent: 101}, {MaxGuestReads: -1}, {WearoutPercent: 200}} {
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "automation@pve!mcp", TokenSecret: "s", InsecureSkipVerify: true, Health: h})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != "Health" {
			t.Errorf("%+v: %v", h, err)
		}
	}
}

// TestCompareSeverity: critical before warning before info, which is the
// order a report's findings come in and a fleet's are merged by.
func TestCompareSeverity(t *testing.T) {
	t.Parallel()
	order := []string{proxmoxsafe.SeverityCritical, proxmoxsafe.SeverityWarning, proxmoxsafe.SeverityInfo}
	for i, a := range order {
		for j, b := range order {
			got := proxmoxsafe.CompareSeverity(a, b)
			if (i < j) != (got < 0) || (i == j) != (got == 0) || (i > j) != (got > 0) {
				t.Errorf("CompareSeverity(%s, %s) = %d", a, b, got)
			}
		}
	}
}
