package proxmoxsafe_test

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d", i+1)
	}
	return out
}

// logRequests returns the start/limit of each task log request.
func logRequests(e *env) []string {
	var out []string
	for _, r := range e.requests() {
		if strings.HasSuffix(r.Path, "/log") {
			out = append(out, r.Query.Get("start")+"/"+r.Query.Get("limit"))
		}
	}
	return out
}

func TestTaskLogTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		logLines  int // before the final TASK OK line
		lines     int
		wantFirst int // n of the first line returned
		wantN     int
		wantReqs  []string
	}{
		{"short log, one request", 3, 0, 1, 4, []string{"0/50"}},
		{"exactly the default", 49, 0, 1, 50, []string{"0/50"}},
		{"long log, default tail", 999, 0, 951, 50, []string{"0/50", "950/50"}},
		{"long log, 10 lines", 999, 10, 991, 10, []string{"0/10", "990/10"}},
		{"long log, the maximum", 999, proxmoxsafe.MaxTaskLogLines, 501, 500, []string{"0/500", "500/500"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			task := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", Type: "vzdump", ID: "100", ExitStatus: "OK", Log: numbered(tc.logLines)})
			r, err := e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: task.UPID, Lines: tc.lines})
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != tc.logLines+1 || len(r.Lines) != tc.wantN || r.Lines[0].N != tc.wantFirst {
				t.Fatalf("total %d, %d lines from %d", r.Total, len(r.Lines), r.Lines[0].N)
			}
			last := r.Lines[len(r.Lines)-1]
			if last.N != r.Total || last.Text != "TASK OK" {
				t.Errorf("last line = %+v", last)
			}
			if r.Task.Type != "vzdump" || r.UPID != task.UPID {
				t.Errorf("task = %+v", r.Task)
			}
			if got := logRequests(e); !slices.Equal(got, tc.wantReqs) {
				t.Errorf("log requests (start/limit) = %v, want %v", got, tc.wantReqs)
			}
			want := "/nodes/pve1/tasks/" + task.UPID + "/log"
			for _, rq := range e.requests() {
				if rq.Path != want || rq.RawPath != "/nodes/pve1/tasks/"+url.PathEscape(task.UPID)+"/log" {
					t.Errorf("request %s (raw %s)", rq.Path, rq.RawPath)
				}
			}
		})
	}
}

func TestTaskLogSanitizesAndRedacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	task := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", ExitStatus: "OK", Log: []string{
		"\x1b[31mred\x1b[0m \u200bzero \u202eRTL\u202c bell\x07",
		"qm set 100 --cipassword hunter2 --ciuser admin",
		"login with api_token=abc123 and password: 'pa ss' done",
		"authentication failure: invalid password",
		strings.Repeat("x", 5000),
		`hook args {"password":"dragon","user":"x"} and {'api_token': 'abc'}`,
	}})
	r, err := e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: task.UPID})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"red zero RTL bell",
		"qm set 100 --cipassword [redacted] --ciuser admin",
		"login with api_token=[redacted] and password: [redacted] done",
		"authentication failure: invalid password",
		4: "", // the long line, checked below
		`hook args {"password":[redacted],"user":"x"} and {'api_token': [redacted]}`,
	}
	for i, w := range want {
		if i == 4 {
			continue
		}
		if r.Lines[i].Text != w {
			t.Errorf("line %d = %q, want %q", i+1, r.Lines[i].Text, w)
		}
	}
	if l := r.Lines[4].Text; len(l) > proxmoxsafe.MaxTaskLogLineLen || !strings.HasSuffix(l, "…") {
		t.Errorf("long line: %d bytes", len(l))
	}
}

func TestTaskLogEmptyLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	task := e.fake.AddTask(proxmoxtest.Task{Node: "pve2", Type: "qmstart"}) // running, empty log
	r, err := e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve2", UPID: task.UPID, Lines: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != 1 || len(r.Lines) != 1 || r.Lines[0].Text != "no content" {
		t.Errorf("empty log = %+v", r)
	}
}

func TestTaskLogRefusesWithoutRequests(t *testing.T) {
	t.Parallel()
	good := "UPID:pve1:00001F41:0000D072:6553F100:qmstart:100:root@pam:"
	far := "UPID:pve3:00001F41:0000D072:6553F100:qmstart:300:root@pam:"
	tests := []struct {
		name string
		in   proxmoxsafe.TaskLogInput
		want error
	}{
		{"node not allowlisted", proxmoxsafe.TaskLogInput{Node: "pve3", UPID: far}, proxmoxsafe.ErrNotAllowed},
		{"node does not match the UPID", proxmoxsafe.TaskLogInput{Node: "pve2", UPID: good}, proxmoxsafe.ErrInvalidInput},
		{"not a UPID", proxmoxsafe.TaskLogInput{Node: "pve1", UPID: "UPID:pve1:../../etc"}, proxmoxsafe.ErrInvalidInput},
		{"empty UPID", proxmoxsafe.TaskLogInput{Node: "pve1"}, proxmoxsafe.ErrInvalidInput},
		{"long UPID", proxmoxsafe.TaskLogInput{Node: "pve1", UPID: good + strings.Repeat("x", 300)}, proxmoxsafe.ErrInvalidInput},
		{"bad node", proxmoxsafe.TaskLogInput{Node: "pve 1", UPID: good}, proxmoxsafe.ErrInvalidInput},
		{"too many lines", proxmoxsafe.TaskLogInput{Node: "pve1", UPID: good, Lines: 501}, proxmoxsafe.ErrInvalidInput},
		{"negative lines", proxmoxsafe.TaskLogInput{Node: "pve1", UPID: good, Lines: -1}, proxmoxsafe.ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			_, err := e.client.TaskLog(t.Context(), tc.in)
			_, err2 := e.client.TaskStatus(t.Context(), tc.in)
			for _, err := range []error{err, err2} {
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
			}
			if reqs := e.requests(); len(reqs) != 0 {
				t.Errorf("refused call sent %v", reqLines(reqs))
			}
		})
	}
}
