package proxmoxsafe_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// escapedPassword is a ticket password with what JSON encoders escape
// differently: non-ASCII letters, the HTML characters Go escapes and
// Perl's encoder does not, and a slash.
const escapedPassword = "Pässwörd<&>/CANARY-41c7"

// jsonEscapings are ways an upstream echo may write s in a JSON string
// that are not Go's: non-ASCII and <>& as \u escapes, "/" as "\/",
// every character \u-escaped.
func jsonEscapings(s string) map[string]string {
	every := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	}
	var nonASCII strings.Builder
	for _, r := range s {
		if r > 0x7e || r == '<' || r == '>' || r == '&' {
			fmt.Fprintf(&nonASCII, `\u%04X`, r)
		} else {
			nonASCII.WriteRune(r)
		}
	}
	return map[string]string{
		"\\u for non-ASCII and <>&": nonASCII.String(),
		"\\/ for /":                 strings.ReplaceAll(s, "/", `\/`),
		"every character \\u":       every(s),
	}
}

// TestUpstreamEscapedSecretNeverLeaks: a password or token secret that
// upstream writes JSON-escaped other than Go does is redacted in what
// the client decodes, on every way upstream text goes on: a read's
// result (a task log line, a guest config value), an error's message
// and errors map, a refused mutation's audit record and the log lines.
func TestUpstreamEscapedSecretNeverLeaks(t *testing.T) {
	t.Parallel()
	const upid = "UPID:pve1:00001234:00005678:65000000:qmstart:100:root@pam:"
	calls := []struct {
		name  string
		fault func(esc string) proxmoxtest.Fault
		call  func(e *env) (any, error)
	}{
		{"task log line", func(esc string) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/tasks/*", Status: 200,
				Body: []byte(`{"data":[{"n":1,"t":"login with ` + esc + ` refused"}],"total":1}`)}
		}, func(e *env) (any, error) {
			return e.client.TaskLog(t.Context(), proxmoxsafe.TaskLogInput{Node: "pve1", UPID: upid})
		}},
		{"guest config value", func(esc string) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/config", Status: 200,
				Body: []byte(`{"data":{"name":"db1","description":"login with ` + esc + `"}}`)}
		}, func(e *env) (any, error) {
			return e.client.GuestConfig(t.Context(), proxmoxsafe.GuestConfigInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: proxmoxsafe.TypeQEMU, VMID: 100}})
		}},
		{"error message and errors", func(esc string) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/status", Status: 400,
				Body: []byte(`{"data":null,"message":"bad login ` + esc + `","errors":{"x":"` + esc + `"}}`)}
		}, func(e *env) (any, error) {
			return e.client.NodeStatus(t.Context(), proxmoxsafe.NodeStatusInput{Node: "pve1"})
		}},
		{"pre-read of a mutation (refused record)", func(esc string) proxmoxtest.Fault {
			return proxmoxtest.Fault{Method: "GET", Path: "/nodes/pve1/qemu/100/status/current", Status: 500,
				Body: []byte(`{"data":null,"message":"backend said ` + esc + `"}`)}
		}, func(e *env) (any, error) {
			return e.client.GuestPower(t.Context(), approvedShutdown100())
		}},
	}
	secrets := []struct {
		name, secret string
		env          func(t *testing.T) *env
	}{
		{"token secret", canary, func(t *testing.T) *env { return newEnv(t, nil) }},
		{"ticket password", escapedPassword, func(t *testing.T) *env {
			cluster := testCluster()
			cluster.Users = map[string]*proxmoxtest.User{
				ticketUser: {Password: escapedPassword, Privileges: map[string][]string{"/": proxmoxtest.AllPrivileges()}},
			}
			fake := proxmoxtest.NewUnstartedServer(cluster)
			fake.StartTLS()
			return envFor(t, fake, false, func(c *proxmoxsafe.Config) {
				c.TokenID, c.TokenSecret = "", ""
				c.Username, c.Password = ticketUser, escapedPassword
			})
		}},
	}
	for _, sec := range secrets {
		for how, esc := range jsonEscapings(sec.secret) {
			for _, tc := range calls {
				t.Run(sec.name+"/"+how+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					e := sec.env(t)
					e.fake.InjectFault(tc.fault(esc))
					res, err := tc.call(e)
					seen := e.logs.String() + e.audit.String() + sprint(res)
					if err != nil {
						seen += err.Error()
					}
					// What reaches a reader decoded: the JSON of the logs,
					// audit and result, read through its escapes.
					if strings.Contains(seen, sec.secret) || strings.Contains(decodeEscapes(seen), sec.secret) {
						t.Errorf("the secret leaked:\n%s", seen)
					}
					if !strings.Contains(seen, "[redacted]") {
						t.Errorf("no redacted text reached the caller (the test does not exercise the path):\n%s", seen)
					}
					for _, r := range e.fake.Requests() {
						if r.Method != "GET" && !(r.Method == "POST" && r.Path == "/access/ticket") {
							t.Errorf("mutating request %s %s", r.Method, r.Path)
						}
					}
				})
			}
		}
	}
}

// decodeEscapes reads \uXXXX and \/ escapes (as a JSON decoder of the
// log or result would) so a check for the secret sees through them.
func decodeEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == 'u' && i+6 <= len(s) {
				var r rune
				if _, err := fmt.Sscanf(s[i+2:i+6], "%04x", &r); err == nil {
					b.WriteRune(r)
					i += 5
					continue
				}
			}
			b.WriteByte(s[i+1])
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
