package proxmoxtest

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

var rrdTestNow = time.Unix(1772458620, 0) // 2026-03-02 13:37 UTC

func rrdServer(t *testing.T, version string, rrd *RRD) *Server {
	t.Helper()
	c := DemoCluster()
	c.Version = version
	if rrd == nil {
		rrd = &RRD{}
	}
	rrd.Now = func() time.Time { return rrdTestNow }
	c.RRD = rrd
	s := NewServer(c)
	t.Cleanup(s.Close)
	return s
}

func rrdRows(t *testing.T, s *Server, path string) []map[string]any {
	t.Helper()
	a := get(t, s, path)
	if a.code != 200 {
		t.Fatalf("GET %s: %s", path, a.status)
	}
	var out []map[string]any
	for _, r := range a.body["data"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func rowKeys(r map[string]any) []string {
	var ks []string
	for k := range r {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestRRDShapesMatchRecordings: the recorded rows' fields (PVE 6 node,
// PVE 7 stopped VM) are what the fake answers for the same release, with
// the same JSON types; row counts and steps are the RRD's.
func TestRRDShapesMatchRecordings(t *testing.T) {
	t.Parallel()
	s := rrdServer(t, "7.4.16", nil)
	node := loadRecording(t, "pve6/node-rrddata-hour.json").([]any)
	got := rrdRows(t, s, "/nodes/pve1/rrddata?timeframe=hour&cf=AVERAGE")
	recRow := node[len(node)-1].(map[string]any) // the recording's last rows carry data
	compareShape(t, "node rrddata", recRow, got[0], nil)
	if len(got) != 70 || len(got[69]) != 1 {
		t.Errorf("%d rows, last %v: PVE ≤ 8 answers 70, the newest with only time", len(got), got[69])
	}
	for i := 1; i < len(got); i++ {
		if d := got[i]["time"].(float64) - got[i-1]["time"].(float64); d != 60 {
			t.Fatalf("step %v at row %d", d, i)
		}
	}
	stopped := loadRecording(t, "pve7/cluster4-qemu-rrddata-hour-stopped.json").([]any)
	rec := stopped[0].(map[string]any)
	var stoppedID int
	s.View(func(c *Cluster) {
		for _, g := range c.Guests {
			if g.Status == "stopped" && g.Type == "qemu" {
				stoppedID = g.VMID
				break
			}
		}
	})
	gr := rrdRows(t, s, fmt.Sprintf("/nodes/pve1/qemu/%d/rrddata?timeframe=hour", stoppedID))
	if !slices.Equal(rowKeys(gr[0]), rowKeys(rec)) {
		t.Errorf("stopped VM row keys %v, recorded %v", rowKeys(gr[0]), rowKeys(rec))
	}
	compareShape(t, "stopped qemu rrddata", rec, gr[0], nil)
}

// TestRRDPVE9 has the 9.x layouts and fields: 1,440 rows for a day, the
// trailing time-only row dropped, memhost and pressure for guests, decade
// for nodes only.
func TestRRDPVE9(t *testing.T) {
	t.Parallel()
	s := rrdServer(t, "9.1.1", nil)
	for tf, want := range map[string]struct {
		rows int
		step float64
	}{"hour": {59, 60}, "day": {1439, 60}, "week": {335, 1800}, "month": {1439, 1800}, "year": {1439, 21600}, "decade": {569, 604800}} {
		rows := rrdRows(t, s, "/nodes/pve1/rrddata?timeframe="+tf)
		if len(rows) != want.rows || rows[1]["time"].(float64)-rows[0]["time"].(float64) != want.step {
			t.Errorf("%s: %d rows", tf, len(rows))
		}
		if _, ok := rows[len(rows)-1]["pressurememoryfull"]; !ok {
			t.Errorf("%s: last row %v", tf, rows[len(rows)-1])
		}
	}
	running := rrdRows(t, s, "/nodes/pve1/qemu/100/rrddata?timeframe=hour&cf=MAX")
	if want := append(slices.Clone(rrdGuestFieldsPVE9), "time"); !slices.Equal(rowKeys(running[0]), slices.Sorted(slices.Values(want))) {
		t.Errorf("running guest row %v", rowKeys(running[0]))
	}
	// Deterministic: the same step answers the same.
	again := rrdRows(t, s, "/nodes/pve1/qemu/100/rrddata?timeframe=hour&cf=MAX")
	if running[10]["cpu"] != again[10]["cpu"] {
		t.Error("two reads of the same step differ")
	}
	// Guest RRDs are keyed by VMID: another node in the path still answers.
	if rows := rrdRows(t, s, "/nodes/pve2/qemu/100/rrddata?timeframe=hour"); len(rows) != 59 {
		t.Errorf("other node: %d rows", len(rows))
	}
	if a := get(t, s, "/nodes/pve1/qemu/100/rrddata?timeframe=decade"); a.code != 400 {
		t.Errorf("guest decade: %s", a.status)
	}
	if a := get(t, s, "/nodes/pve1/qemu/100/rrddata"); a.code != 400 {
		t.Errorf("no timeframe: %s", a.status)
	}
	if a := get(t, s, "/nodes/pve1/qemu/99999/rrddata?timeframe=hour"); a.status != "500 RRD error: opening '/var/lib/rrdcached/db/pve-vm-9.0/99999': No such file or directory" {
		t.Errorf("no such guest: %s", a.status)
	}
	st := rrdRows(t, s, "/nodes/pve1/storage/local/rrddata?timeframe=day")
	if !slices.Equal(rowKeys(st[0]), []string{"time", "total", "used"}) {
		t.Errorf("storage row %v", st[0])
	}
}

func TestRRDPVE8Decade(t *testing.T) {
	t.Parallel()
	s := rrdServer(t, "8.4.1", nil)
	if a := get(t, s, "/nodes/pve1/rrddata?timeframe=decade"); a.code != 400 {
		t.Errorf("8.4 decade: %s", a.status)
	}
}

// TestRRDUpgradeSplice: after an 8→9 upgrade the old file's rows (12 h
// steps for a month, pve2 fields) precede the new ones.
func TestRRDUpgradeSplice(t *testing.T) {
	t.Parallel()
	up := rrdTestNow.Add(-5 * 24 * time.Hour).Unix()
	s := rrdServer(t, "9.1.1", &RRD{UpgradedAt: up, Since: map[string]int64{"node/pve2": rrdTestNow.Unix() - 600}, Missing: []string{"vm/101"}})
	rows := rrdRows(t, s, "/nodes/pve1/qemu/100/rrddata?timeframe=month")
	var old, new int
	for _, r := range rows {
		_, hasHost := r["memhost"]
		switch t0 := int64(r["time"].(float64)); {
		case t0 < up && !hasHost:
			old++
		case t0 >= up && hasHost:
			new++
		default:
			t.Fatalf("row %v on the wrong side of the upgrade", r)
		}
	}
	if old < 40 || new < 200 {
		t.Errorf("%d old rows, %d new", old, new)
	}
	empty := 0
	for _, r := range rrdRows(t, s, "/nodes/pve2/rrddata?timeframe=hour") {
		if len(r) == 1 {
			empty++
		}
	}
	if empty != 49 {
		t.Errorf("%d time-only rows before the node's RRD began", empty)
	}
	if a := get(t, s, "/nodes/pve1/qemu/101/rrddata?timeframe=hour"); a.code != 500 {
		t.Errorf("missing RRD: %s", a.status)
	}
	// Privileges: Sys.Audit on the node, VM.Audit on the guest,
	// Datastore.Audit or AllocateSpace on the storage.
	s.AddToken("a@pve!vm", &Token{Secret: "s", Privileges: map[string][]string{"/vms": {"VM.Audit"}, "/storage/local": {"Datastore.AllocateSpace"}}})
	auth := tokenAuth("a@pve!vm", "s")
	if a := call(t, s, "GET", "/nodes/pve1/rrddata?timeframe=hour", nil, auth); a.status != "403 Permission check failed (/nodes/pve1, Sys.Audit)" {
		t.Errorf("node without Sys.Audit: %s", a.status)
	}
	for _, p := range []string{"/nodes/pve1/qemu/100/rrddata?timeframe=hour", "/nodes/pve1/storage/local/rrddata?timeframe=hour"} {
		if a := call(t, s, "GET", p, nil, auth); a.code != 200 {
			t.Errorf("%s: %s", p, a.status)
		}
	}
}
