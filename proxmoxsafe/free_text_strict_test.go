package proxmoxsafe_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestDedicatedReadsAsStrictAsGateway: the free text of the dedicated
// reads — a snapshot's description, a backup's notes, a task's exit
// status in its status and in the task list — gets the rule api_get
// applies to every string: a secret-looking argument is redacted, the
// rest of the text kept.
func TestDedicatedReadsAsStrictAsGateway(t *testing.T) {
	t.Parallel()
	const upid = "UPID:pve1:00001234:00005678:65000000:qmstart:100:root@pam:"
	for _, tc := range []struct {
		name  string
		fault proxmoxtest.Fault
		call  func(e *env) (any, error)
		kept  string
	}{
		{"snapshot description", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/snapshot", Status: 200,
			Body: []byte(`{"data":[{"name":"pre","description":"before upgrade, db_password=CANARY-snap","snaptime":1700000000},{"name":"current","description":"You are here!","parent":"pre","running":1}]}`)},
			func(e *env) (any, error) {
				return e.client.ListSnapshots(t.Context(), proxmoxsafe.ListSnapshotsInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
			}, "before upgrade, db_password=[redacted]"},
		{"task exit status", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Status: 200,
			Body: []byte(`{"data":{"upid":"` + upid + `","node":"pve1","pid":4660,"pstart":22136,"starttime":1694498816,"type":"qmstart","id":"100","user":"root@pam","status":"stopped","exitstatus":"command 'mysql -u root -pCANARY-exit' failed: exit code 1"}}`)},
			func(e *env) (any, error) {
				return e.client.TaskState(t.Context(), proxmoxsafe.TaskStateInput{Node: "pve1", UPID: upid})
			}, "mysql -u root -p[redacted]' failed"},
		{"task list status", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks", Status: 200,
			Body: []byte(`{"data":[{"upid":"` + upid + `","node":"pve1","pid":4660,"pstart":22136,"starttime":1694498816,"endtime":1694498820,"type":"qmstart","id":"100","user":"root@pam","status":"sshpass -p CANARY-list failed"}],"total":1}`)},
			func(e *env) (any, error) {
				return e.client.ListTasks(t.Context(), proxmoxsafe.ListTasksInput{Node: "pve1"})
			}, "sshpass -p [redacted] failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil)
			e.fake.InjectFault(tc.fault)
			res, err := tc.call(e)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			if strings.Contains(string(b), "CANARY") || !strings.Contains(string(b), tc.kept) {
				t.Errorf("result = %s, want the secret redacted and %q kept", b, tc.kept)
			}
		})
	}
}
