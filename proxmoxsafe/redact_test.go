package proxmoxsafe_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// headerLeak matches a credential that survived redaction: the header name
// followed by anything but the redaction marker.
var headerLeak = regexp.MustCompile(`(?i)PVEAPIToken\s*[=:]\s*[^\[\s]`)

// TestUpstreamEchoNeverLeaksTheSecret: a proxy, WAF or debug
// page that repeats the request's Authorization header (in the reason
// phrase, the JSON message, the errors map, a task log line, a task's exit
// status) must not carry the token secret into any error, log line or
// audit record, over TLS and over plain HTTP.
func TestUpstreamEchoNeverLeaksTheSecret(t *testing.T) {
	t.Parallel()
	const upid = "UPID:pve1:00001234:00005678:65000000:qmstart:100:root@pam:"
	for _, scheme := range []string{"https", "http"} {
		cases := []struct {
			name  string
			fault proxmoxtest.Fault
			call  func(e *env) (any, error)
			// hidden: the echo is not relayed at all (an HTML page is not
			// decoded), so there is no redacted text to see either.
			hidden bool
		}{
			{"reason phrase on a read", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/status", Status: 502, Reason: "proxy saw {{auth}}", Body: []byte(`{"data":null}`), Echo: true},
				func(e *env) (any, error) {
					return e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
				}, false},
			{"message and errors on a read", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/status", Status: 400, Echo: true},
				func(e *env) (any, error) {
					return e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
				}, false},
			{"html error page", proxmoxtest.Fault{Method: "GET", Path: "/cluster/resources", Status: 500, Body: []byte("<html><pre>{{auth}}</pre></html>"), Echo: true},
				func(e *env) (any, error) {
					return e.client.ListGuests(t.Context(), proxmoxsafe.ListGuestsInput{})
				}, true},
			{"success body", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Status: 200, Echo: true,
				Body: []byte(`{"data":{"upid":"` + upid + `","node":"pve1","pid":4660,"pstart":22136,"starttime":1694498816,"type":"qmstart","id":"100","user":"root@pam","status":"stopped","exitstatus":"rejected {{auth}}"}}`)},
				func(e *env) (any, error) {
					return e.client.TaskState(t.Context(), proxmoxsafe.TaskStateInput{Node: "pve1", UPID: upid})
				}, false},
			{"task log line", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Status: 200, Echo: true,
				Body: []byte(`{"data":[{"n":1,"t":"curl -H '{{auth}}' https://pve"}],"total":1}`)},
				func(e *env) (any, error) {
					return e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: upid})
				}, false},
			{"pre-read of a mutation (refused record)", proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/status/current", Status: 500, Reason: "backend said {{auth}}", Echo: true},
				func(e *env) (any, error) {
					return e.client.GuestPower(t.Context(), approvedShutdown100())
				}, false},
			{"mutation POST (failed record)", proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/qemu/100/status/shutdown", Status: 500, Reason: "upstream {{auth}}", Echo: true},
				func(e *env) (any, error) {
					return e.client.GuestPower(t.Context(), approvedShutdown100())
				}, false},
		}
		for _, tc := range cases {
			t.Run(scheme+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				fake := proxmoxtest.NewUnstartedServer(testCluster())
				if scheme == "https" {
					fake.StartTLS()
				} else {
					fake.Start()
				}
				e := envFor(t, fake, false, func(c *proxmoxsafe.Config) {
					if scheme == "http" {
						c.Fingerprint, c.AllowInsecureHTTP = "", true
					}
				})
				fake.InjectFault(tc.fault)
				res, err := tc.call(e)
				seen := e.logs.String() + e.audit.String() + strings.TrimSpace(sprint(res))
				if err != nil {
					seen += err.Error()
				}
				if n := len(fake.Requests()); n == 0 {
					t.Fatal("the fault was never reached: no upstream request")
				}
				if strings.Contains(seen, canary) || headerLeak.MatchString(seen) {
					t.Errorf("secret leaked:\n%s", seen)
				}
				if !tc.hidden && !strings.Contains(seen, "[redacted]") {
					t.Errorf("the echoed header did not reach the caller redacted (test does not exercise the path):\n%s", seen)
				}
			})
		}
	}
}

func approvedShutdown100() proxmoxsafe.GuestPowerInput {
	in := proxmoxsafe.GuestPowerInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}, Action: proxmoxsafe.ActionShutdown}
	in.Approval = in.ApprovalPhrase()
	return in
}

// sprint renders a result as JSON for leak checks.
func sprint(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
