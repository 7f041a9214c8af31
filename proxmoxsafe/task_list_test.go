package proxmoxsafe_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// seedTasks adds a history to pve1: an OK start of 100, a failed start of
// 101, a vzdump with warnings, a running shutdown of 100 started by the
// test token, and a task on pve2.
func seedTasks(e *env) map[string]proxmoxtest.Task {
	return map[string]proxmoxtest.Task{
		"ok":      e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "100", StartTime: 1700000000, ExitStatus: "OK"}),
		"failed":  e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "101", StartTime: 1700000100, ExitStatus: "start failed: \x1b[31mboom\u202e"}),
		"dump":    e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "", StartTime: 1700000200, ExitStatus: "WARNINGS: 1"}),
		"running": e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmshutdown", ID: "100", StartTime: 1700000300, User: "automation@pve!mcp"}),
		"other":   e.fake.AddTask(proxmoxtest.Task{Node: "pve2", Type: "qmstart", ID: "105", StartTime: 1700000400, ExitStatus: "OK"}),
	}
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	seed := seedTasks(e)
	r, err := e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range r.Tasks {
		got = append(got, task.UPID)
	}
	if want := []string{seed["running"].UPID, seed["dump"].UPID, seed["failed"].UPID, seed["ok"].UPID}; !slices.Equal(got, want) {
		t.Errorf("upids = %v, want newest first %v", got, want)
	}
	if r.Total != 4 || r.NextStart != 0 || r.Node != "pve1" {
		t.Errorf("total %d, next %d", r.Total, r.NextStart)
	}
	run, failed, dump, ok := r.Tasks[0], r.Tasks[2], r.Tasks[1], r.Tasks[3]
	if run.Status != "running" || run.ExitStatus != "" || run.Failed || !run.EndTime.IsZero() || run.User != "automation@pve!mcp" || run.Type != "qmshutdown" {
		t.Errorf("running = %+v", run)
	}
	if failed.Status != "stopped" || failed.ExitStatus != "start failed: boom" || !failed.Failed || failed.ID != "101" {
		t.Errorf("failed = %+v", failed)
	}
	if dump.Failed || dump.ExitStatus != "WARNINGS: 1" || dump.ID != "" {
		t.Errorf("warnings = %+v", dump)
	}
	if ok.Failed || ok.User != "root@pam" || !ok.StartTime.Equal(time.Unix(1700000000, 0)) || !ok.EndTime.Equal(time.Unix(1700000001, 0)) {
		t.Errorf("ok = %+v", ok)
	}
	reqs := e.requests()
	if len(reqs) != 1 || reqLine(reqs[0]) != "GET /nodes/pve1/tasks" {
		t.Fatalf("requests = %v", reqLines(reqs))
	}
	if q := reqs[0].Query; !equalQuery(q, url.Values{"source": {"all"}, "start": {"0"}, "limit": {"50"}}) {
		t.Errorf("query = %v", q)
	}
}

func equalQuery(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if !slices.Equal(a[k], v) {
			return false
		}
	}
	return true
}

func TestListTasksFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	seed := seedTasks(e)
	tests := []struct {
		name  string
		in    proxmoxsafe.ListTasksInput
		query url.Values
		want  []string
	}{
		{"vmid", proxmoxsafe.ListTasksInput{Node: "pve1", VMID: 100},
			url.Values{"source": {"all"}, "start": {"0"}, "limit": {"50"}, "vmid": {"100"}}, []string{"running", "ok"}},
		{"type", proxmoxsafe.ListTasksInput{Node: "pve1", Type: "qmstart"},
			url.Values{"source": {"all"}, "start": {"0"}, "limit": {"50"}, "typefilter": {"qmstart"}}, []string{"failed", "ok"}},
		{"errors only", proxmoxsafe.ListTasksInput{Node: "pve1", ErrorsOnly: true},
			url.Values{"source": {"all"}, "start": {"0"}, "limit": {"50"}, "errors": {"1"}}, []string{"failed"}},
		{"combined", proxmoxsafe.ListTasksInput{Node: "pve1", VMID: 101, Type: "qmstart", ErrorsOnly: true, Limit: 5},
			url.Values{"source": {"all"}, "start": {"0"}, "limit": {"5"}, "vmid": {"101"}, "typefilter": {"qmstart"}, "errors": {"1"}}, []string{"failed"}},
		{"other node", proxmoxsafe.ListTasksInput{Node: "pve2"},
			url.Values{"source": {"all"}, "start": {"0"}, "limit": {"50"}}, []string{"other"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.fake.ResetRequests()
			r, err := e.client.ListTasks(t.Context(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, task := range r.Tasks {
				got = append(got, task.UPID)
			}
			for _, k := range tc.want {
				want = append(want, seed[k].UPID)
			}
			if !slices.Equal(got, want) || r.Total != len(want) {
				t.Errorf("got %v (total %d), want %v", got, r.Total, tc.want)
			}
			if reqs := e.requests(); len(reqs) != 1 || !equalQuery(reqs[0].Query, tc.query) {
				t.Errorf("query = %v, want %v", reqs[0].Query, tc.query)
			}
		})
	}
}

func TestListTasksPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for i := range 620 {
		e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "qmstart", ID: "100", StartTime: int64(1700000000 + i), ExitStatus: "OK"})
	}
	r, err := e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1", Limit: proxmoxsafe.MaxTaskListLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 500 || r.Total != 620 || r.NextStart != 500 || !r.Tasks[0].StartTime.Equal(time.Unix(1700000619, 0)) {
		t.Fatalf("%d tasks of %d, next %d", len(r.Tasks), r.Total, r.NextStart)
	}
	r, err = e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1", Limit: proxmoxsafe.MaxTaskListLimit, Start: r.NextStart})
	if err != nil || len(r.Tasks) != 120 || r.NextStart != 0 || !r.Tasks[119].StartTime.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("second page: %d tasks, next %d, err %v", len(r.Tasks), r.NextStart, err)
	}
	r, err = e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1"})
	if err != nil || len(r.Tasks) != proxmoxsafe.DefaultTaskListLimit || r.NextStart != 50 {
		t.Errorf("default page: %d tasks, next %d, err %v", len(r.Tasks), r.NextStart, err)
	}
}

// TestListTasksOwnTasksOnly: without Sys.Audit on the node Proxmox lists
// only the token's own tasks; the library passes that on.
func TestListTasksOwnTasksOnly(t *testing.T) {
	t.Parallel()
	c := testCluster()
	c.Tokens["automation@pve!mcp"].Privileges = map[string][]string{"/vms": {"VM.Audit"}}
	e := newEnvWith(t, c, nil)
	seed := seedTasks(e)
	r, err := e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 1 || r.Tasks[0].UPID != seed["running"].UPID {
		t.Errorf("tasks = %+v", r.Tasks)
	}
}

func TestListTasksRefusesWithoutRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   proxmoxsafe.ListTasksInput
		want error
	}{
		{"node not allowlisted", proxmoxsafe.ListTasksInput{Node: "pve3"}, proxmoxsafe.ErrNotAllowed},
		{"no node", proxmoxsafe.ListTasksInput{}, proxmoxsafe.ErrInvalidInput},
		{"bad node", proxmoxsafe.ListTasksInput{Node: "pve1/.."}, proxmoxsafe.ErrInvalidInput},
		{"bad vmid", proxmoxsafe.ListTasksInput{Node: "pve1", VMID: 42}, proxmoxsafe.ErrInvalidInput},
		{"bad type", proxmoxsafe.ListTasksInput{Node: "pve1", Type: "qm start"}, proxmoxsafe.ErrInvalidInput},
		{"type with colon", proxmoxsafe.ListTasksInput{Node: "pve1", Type: "qm:start"}, proxmoxsafe.ErrInvalidInput},
		{"long type", proxmoxsafe.ListTasksInput{Node: "pve1", Type: strings.Repeat("q", 65)}, proxmoxsafe.ErrInvalidInput},
		{"limit too big", proxmoxsafe.ListTasksInput{Node: "pve1", Limit: 501}, proxmoxsafe.ErrInvalidInput},
		{"negative limit", proxmoxsafe.ListTasksInput{Node: "pve1", Limit: -1}, proxmoxsafe.ErrInvalidInput},
		{"negative start", proxmoxsafe.ListTasksInput{Node: "pve1", Start: -1}, proxmoxsafe.ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			_, err := e.client.ListTasks(t.Context(), tc.in)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if reqs := e.requests(); len(reqs) != 0 {
				t.Errorf("refused call sent %v", reqLines(reqs))
			}
		})
	}
}
