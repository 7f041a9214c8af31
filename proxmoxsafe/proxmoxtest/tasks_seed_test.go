package proxmoxtest

import (
	"net/url"
	"slices"
	"testing"
)

func TestAddTask(t *testing.T) {
	t.Parallel()
	s := NewServer(configCluster())
	t.Cleanup(s.Close)
	ok := s.AddTask(Task{Node: "pve1", Type: "vzdump", ID: "100", StartTime: 1700000000, ExitStatus: "OK", Log: taskLogLines(120)})
	bad := s.AddTask(Task{Node: "pve1", Type: "qmstart", ID: "100", StartTime: 1700000100, ExitStatus: "start failed: boom"})
	run := s.AddTask(Task{Node: "pve1", Type: "qmshutdown", ID: "100", StartTime: 1700000200, Log: []string{"shutting down"}})
	for _, u := range []string{ok.UPID, bad.UPID, run.UPID} {
		if !upidFACTS.MatchString(u) {
			t.Errorf("UPID %q does not match the FACTS regex", u)
		}
	}
	if ok.Log[len(ok.Log)-1] != "TASK OK" || bad.Log[0] != "TASK ERROR: start failed: boom" || run.Status != "running" || ok.EndTime != 1700000001 {
		t.Errorf("defaults: ok %+v, bad %+v, run %+v", ok, bad, run)
	}

	// Log paging: start/limit with the total.
	a := get(t, s, "/nodes/pve1/tasks/"+url.PathEscape(ok.UPID)+"/log?start=100&limit=50")
	lines := a.body["data"].([]any)
	first := lines[0].(map[string]any)
	if a.body["total"] != 121.0 || len(lines) != 21 || first["n"] != 101.0 || first["t"] != "line 101" {
		t.Errorf("log page: total %v, %d lines, first %v", a.body["total"], len(lines), first)
	}

	// Task list filters.
	upids := func(q string) []string {
		var out []string
		for _, e := range get(t, s, "/nodes/pve1/tasks"+q).body["data"].([]any) {
			out = append(out, e.(map[string]any)["upid"].(string))
		}
		return out
	}
	for q, want := range map[string][]string{
		"":                                     {bad.UPID, ok.UPID},
		"?source=all":                          {run.UPID, bad.UPID, ok.UPID},
		"?source=all&errors=1":                 {bad.UPID},
		"?source=all&typefilter=vzdump":        {ok.UPID},
		"?source=all&vmid=100&limit=1&start=1": {bad.UPID},
		"?source=all&vmid=101":                 nil,
	} {
		if got := upids(q); !slices.Equal(got, want) {
			t.Errorf("tasks%s = %v, want %v", q, got, want)
		}
	}
	s.FinishTasks()
	if st := taskStatus(t, s, "pve1", run.UPID); st["status"] != "stopped" || st["exitstatus"] != "OK" {
		t.Errorf("running seeded task after FinishTasks: %v", st)
	}
}
