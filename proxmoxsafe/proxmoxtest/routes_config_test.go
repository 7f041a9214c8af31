package proxmoxtest

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
)

// configCluster has a qemu VM and a container carrying every kind of
// secret-bearing config key, and a VM whose current state is based on an
// older snapshot (after a rollback).
func configCluster() *Cluster {
	c := &Cluster{Name: "c", Nodes: []*Node{{Name: "pve1", Online: true}}}
	vm := &Guest{VMID: 100, Node: "pve1", Type: "qemu", Name: "vm", Status: "running", CPUs: 2, MaxMem: 2 << 30,
		Config: map[string]string{
			"cipassword": "hunter2", "ciuser": "admin",
			"sshkeys":    "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIabc%20me%40host%0A",
			"args":       "-fw_cfg name=opt/secret,string=s3cr3t",
			"hookscript": "local:snippets/hook.pl",
			"cores":      "4",
		},
		Snapshots: []*Snapshot{
			{Name: "a", SnapTime: 100},
			{Name: "b", Parent: "a", SnapTime: 200},
		},
		CurrentSnapshot: "a",
	}
	ct := &Guest{VMID: 200, Node: "pve1", Type: "lxc", Name: "ct", Status: "stopped", CPUs: 1, MaxMem: 512 << 20,
		Config: map[string]string{"env": "TOKEN=abc\x00MODE=x", "entrypoint": "/app --key=k"},
		LXCRaw: [][2]string{{"lxc.apparmor.profile", "unconfined"}, {"lxc.environment", "PASS=x"}},
	}
	c.Guests = []*Guest{vm, ct}
	return c
}

func TestGuestConfigExtras(t *testing.T) {
	t.Parallel()
	s := NewServer(configCluster())
	t.Cleanup(s.Close)

	vm := get(t, s, "/nodes/pve1/qemu/100/config").body["data"].(map[string]any)
	if vm["cipassword"] != "**********" {
		t.Errorf("cipassword = %v, want PVE's mask", vm["cipassword"])
	}
	for k, want := range map[string]any{
		"ciuser": "admin", "hookscript": "local:snippets/hook.pl", "cores": "4",
		"args":    "-fw_cfg name=opt/secret,string=s3cr3t",
		"sshkeys": "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIabc%20me%40host%0A",
		"parent":  "a", "name": "vm",
	} {
		if vm[k] != want {
			t.Errorf("%s = %v, want %v", k, vm[k], want)
		}
	}
	if _, ok := vm["lxc"]; ok {
		t.Error("a VM config has an lxc key")
	}

	ct := get(t, s, "/nodes/pve1/lxc/200/config").body["data"].(map[string]any)
	raw, _ := json.Marshal(ct["lxc"])
	if string(raw) != `[["lxc.apparmor.profile","unconfined"],["lxc.environment","PASS=x"]]` {
		t.Errorf("lxc = %s, want PVE's list of [key, value] pairs", raw)
	}
	if ct["env"] != "TOKEN=abc\x00MODE=x" || ct["entrypoint"] != "/app --key=k" || ct["hostname"] != "ct" {
		t.Errorf("container config = %v", ct)
	}
	if _, ok := ct["parent"]; ok {
		t.Error("a guest without snapshots has a parent")
	}
	// The model keeps the clear value; only the API masks it.
	if g, _ := s.Guest(100); g.Config["cipassword"] != "hunter2" {
		t.Errorf("model cipassword = %q", g.Config["cipassword"])
	}
}

func TestSnapshotTreeAfterRollback(t *testing.T) {
	t.Parallel()
	s := NewServer(configCluster())
	t.Cleanup(s.Close)
	list := get(t, s, "/nodes/pve1/qemu/100/snapshot").body["data"].([]any)
	cur := list[len(list)-1].(map[string]any)
	if cur["name"] != "current" || cur["parent"] != "a" || cur["running"] != 1.0 || cur["description"] != "You are here!" {
		t.Errorf("current entry = %v", cur)
	}
	// A new snapshot branches off the current one and becomes current.
	up := upidOf(t, post(t, s, "/nodes/pve1/qemu/100/snapshot", url.Values{"snapname": {"cc"}}))
	pollUntilStopped(t, s, "pve1", up)
	parents := map[string]any{}
	for _, e := range get(t, s, "/nodes/pve1/qemu/100/snapshot").body["data"].([]any) {
		m := e.(map[string]any)
		parents[m["name"].(string)] = m["parent"]
	}
	if parents["cc"] != "a" || parents["current"] != "cc" || parents["b"] != "a" || parents["a"] != nil {
		t.Errorf("parents = %v, want cc on a, current on cc", parents)
	}
	if cfg := get(t, s, "/nodes/pve1/qemu/100/config").body["data"].(map[string]any); cfg["parent"] != "cc" {
		t.Errorf("config parent = %v", cfg["parent"])
	}
}

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
