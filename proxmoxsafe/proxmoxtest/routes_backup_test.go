package proxmoxtest

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestVZDumpSetSelectors: all, exclude and pool resolve as vzdump's
// get_included_guests does, to the guests on the node the request is
// for; the others are named "skip external VMs"; a pool or vmid list
// with no guest here answers "OK" without a task, all still runs.
func TestVZDumpSetSelectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		form   url.Values
		backed []int  // backed up on pve1, in order
		skip   string // the log's "skip external VMs" list
		ok     bool   // answers "OK" without a task
	}{
		{"all", url.Values{"all": {"1"}}, []int{100, 101, 102, 200}, "103, 104, 105, 106, 107, 201, 202, 203, 204", false},
		{"exclude implies all", url.Values{"exclude": {"100,102"}}, []int{101, 200}, "103, 104, 105, 106, 107, 201, 202, 203, 204", false},
		{"pool", url.Values{"pool": {"databases"}}, []int{102}, "", false},
		{"pool elsewhere", url.Values{"pool": {"lab"}}, nil, "", true},
		{"vmid list", url.Values{"vmid": {"100,104"}}, []int{100}, "104", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := DemoCluster()
			c.guest(102).Lock = "" // the demo's db is locked by a backup
			c.guest(104).Pool = "lab"
			s := NewServer(c)
			defer s.Close()
			form := url.Values{"storage": {"local"}, "mode": {"snapshot"}}
			for k, v := range tc.form {
				form[k] = v
			}
			a := post(t, s, "/nodes/pve1/vzdump", form)
			if a.code != 200 {
				t.Fatalf("vzdump: %s %s", a.status, a.raw)
			}
			if tc.ok {
				if a.body["data"] != "OK" || len(s.Tasks()) != 0 {
					t.Fatalf("answer %v, tasks %d; want OK and no task", a.body["data"], len(s.Tasks()))
				}
				return
			}
			upid, _ := a.body["data"].(string)
			s.FinishTasks()
			var got []int
			for _, b := range s.cluster.storage("local").Backups {
				if b.source != nil {
					got = append(got, b.VMID)
				}
			}
			if !slices.Equal(got, tc.backed) {
				t.Errorf("backed up %v, want %v", got, tc.backed)
			}
			task := s.taskByUPID[upid]
			if task == nil {
				t.Fatalf("no task %s", upid)
			}
			log := strings.Join(task.Log, "\n")
			first := task.Log[0]
			if !strings.HasPrefix(first, "INFO: starting new backup job: vzdump") || !strings.Contains(first, "--storage local") || strings.Contains(first, "job-id") {
				t.Errorf("first line %q", first)
			}
			if tc.skip != "" && !strings.Contains(log, "INFO: skip external VMs: "+tc.skip) {
				t.Errorf("log lacks the skip line %q:\n%s", tc.skip, log)
			}
			wantID := ""
			if len(tc.backed) == 1 {
				wantID = "102"
			}
			if tc.name == "vmid list" {
				wantID = "100"
			}
			if task.ID != wantID {
				t.Errorf("UPID id = %q, want %q", task.ID, wantID)
			}
			if task.ExitStatus != "OK" {
				t.Errorf("exit %q:\n%s", task.ExitStatus, log)
			}
		})
	}
}

// TestVZDumpAllSkipsWithoutVMBackup: with all, a guest the token may not
// back up is skipped silently; a vmid list naming it is refused.
func TestVZDumpAllSkipsWithoutVMBackup(t *testing.T) {
	t.Parallel()
	s := NewServer(DemoCluster())
	defer s.Close()
	s.AddToken("b@pve!one", &Token{Secret: "s", Privileges: map[string][]string{
		"/vms/200": {"VM.Backup"}, "/storage": {"Datastore.AllocateSpace"}}})
	auth := tokenAuth("b@pve!one", "s")
	a := call(t, s, "POST", "/nodes/pve1/vzdump", url.Values{"all": {"1"}, "storage": {"local"}}, auth)
	if a.code != 200 {
		t.Fatalf("all: %s %s", a.status, a.raw)
	}
	s.FinishTasks()
	var got []int
	for _, b := range s.cluster.storage("local").Backups {
		if b.source != nil {
			got = append(got, b.VMID)
		}
	}
	if !slices.Equal(got, []int{200}) {
		t.Errorf("backed up %v, want only 200", got)
	}
	if a := call(t, s, "POST", "/nodes/pve1/vzdump", url.Values{"vmid": {"100"}, "storage": {"local"}}, auth); a.code != 403 {
		t.Errorf("vmid without VM.Backup: %s", a.status)
	}
}

// TestVZDumpOrphanFails: a listed guest that no longer exists fails the
// task visibly.
func TestVZDumpOrphanFails(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	a := post(t, s, "/nodes/pve1/vzdump", url.Values{"vmid": {"999"}, "storage": {"local"}})
	upid, _ := a.body["data"].(string)
	if a.code != 200 || !strings.HasPrefix(upid, "UPID:") {
		t.Fatalf("vzdump: %s %s", a.status, a.raw)
	}
	s.FinishTasks()
	task := s.taskByUPID[upid]
	if task.ExitStatus != "job errors" || !slices.Contains(task.Log, "ERROR: Backup of VM 999 failed - unable to find VM '999'") {
		t.Errorf("exit %q, log %q", task.ExitStatus, task.Log)
	}
}

// TestExtractConfig: the archive's config file as text (the description
// as comment lines, the QEMU disk map), behind the volume's read access.
func TestExtractConfig(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	vol := "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"
	a := get(t, s, "/nodes/pve1/vzdump/extractconfig?volume="+url.QueryEscape(vol))
	text, _ := a.body["data"].(string)
	for _, want := range []string{"#Public web frontend\n", "\ncores: 4\n", "\nname: web-01\n", "#qmdump#map:scsi0:drive-scsi0:local-lvm:raw:"} {
		if !strings.Contains("\n"+text, want) {
			t.Errorf("config lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "digest:") || strings.Contains(text, "lock:") {
		t.Errorf("config has digest or lock:\n%s", text)
	}
	if a := get(t, s, "/nodes/pve1/vzdump/extractconfig?volume="+url.QueryEscape("local:backup/vzdump-qemu-100-2020_01_01-00_00_00.vma.zst")); a.code != 500 {
		t.Errorf("missing volume: %s", a.status)
	}
	s.AddToken("b@pve!none", &Token{Secret: "s", Privileges: map[string][]string{"/storage": {"Datastore.Audit"}}})
	if a := call(t, s, "GET", "/nodes/pve1/vzdump/extractconfig?volume="+url.QueryEscape(vol), nil, tokenAuth("b@pve!none", "s")); a.code != 403 {
		t.Errorf("without AllocateSpace: %s", a.status)
	}
}
