package proxmoxsafe_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestTaskLogSecretShapes: task log lines quoting a secret in a shape no
// name rule sees (mysql -pX, sshpass -p X, curl -u user:X, a URL's
// user:X@) are redacted by task_status's log and by api_get of the same
// log alike, and the commands around them stay readable.
func TestTaskLogSecretShapes(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	task := e.fake.AddTask(proxmoxtest.Task{Node: "pve1", ExitStatus: "OK", Log: []string{
		"hook: mysqldump -u root -pdragon-CANARY appdb > /backup/appdb.sql",
		"hook: sshpass -p hunter2-CANARY rsync -a /srv root@nas:/backup",
		"hook: curl -fsS -u backup:k3y-CANARY https://hc.example/ping",
		"hook: restic -r sftp://backup:pa55-CANARY@nas.example//repo backup /srv",
		"INFO: finished, see https://pve1:8006/#v1 for mysql stats",
	}})
	tl, err := e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: task.UPID})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/tasks/" + task.UPID + "/log"})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"task log": tl, "api_get": gw.Data} {
		b, _ := json.Marshal(v)
		s := string(b)
		if strings.Contains(s, "CANARY") {
			t.Errorf("%s shows a secret: %s", name, s)
		}
		for _, kept := range []string{"mysqldump -u root -p[redacted] appdb", "sshpass -p [redacted] rsync", "-u backup:[redacted] https://hc.example/ping",
			"sftp://backup:[redacted]@nas.example//repo", "https://pve1:8006/#v1 for mysql stats"} {
			if !strings.Contains(s, kept) {
				t.Errorf("%s lacks %q: %s", name, kept, s)
			}
		}
	}
}
