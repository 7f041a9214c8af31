package proxmoxsafe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// gatewayEnv is newEnv with both gateway classes enabled and the phrase
// as gateway-write's approval level (its default is elicit, grant).
func gatewayEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite)
		c.Policy.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}
		if mod != nil {
			mod(c)
		}
	})
}

// gatewayGuestPath is a write under a guest's path that no dedicated
// operation covers (a firewall rule of guest 101), for the tests of the
// gateway's own mechanics: a covered route is refused
// (TestGatewayCoveredRoutesRefused). The fake models no firewall:
// acceptGatewayWrite makes it answer as Proxmox answers a created rule.
const gatewayGuestPath = "/nodes/pve1/qemu/101/firewall/rules"

// acceptGatewayWrite makes the fake answer method on path with data (its
// "data" member, JSON) and record the request, as it records every one.
func acceptGatewayWrite(e *env, method, path, data string) {
	e.fake.InjectFault(proxmoxtest.Fault{Method: method, Path: path, Body: []byte(`{"data":` + data + `}`)})
}

// hostilePaths are paths the gateway refuses as invalid input, whatever
// the method and the approval: each must cause zero upstream requests.
var hostilePaths = []struct{ name, path, mention string }{
	{"empty", "", "is required"},
	{"https URL", "https://evil.example/api2/json/version", "full URL"},
	{"http URL to the real host", "http://pve1:8006/api2/json/nodes", "full URL"},
	{"scheme without slashes", "javascript:alert(1)", "full URL"},
	{"host:port without scheme", "evil.example:8006/version", "full URL"},
	{"protocol-relative", "//evil.example/version", "names a host"},
	{"no leading slash", "version", "must start with"},
	{"api2 prefix", "/api2/json/version", "leave out the /api2/json prefix"},
	{"query string", "/cluster/resources?type=vm", "query string"},
	{"query on a denied path", "/version?x=/../access", "query string"},
	{"fragment", "/version#frag", "fragment"},
	{"dot-dot", "/nodes/../access/users", "dot segments"},
	{"dot", "/nodes/pve1/./status", "dot segments"},
	{"trailing dot-dot", "/nodes/pve1/..", "dot segments"},
	{"triple dot", "/nodes/...", "dot segments"},
	{"encoded dot-dot", "/nodes/%2e%2e/access/acl", "encoded \".\" or \"..\""},
	{"encoded dot-dot upper case", "/nodes/%2E%2E/access", "encoded \".\" or \"..\""},
	{"double-encoded dot-dot", "/nodes/%252e%252e/access", "encoded \".\" or \"..\""},
	{"encoded slash", "/nodes/pve1%2Fstatus", "encoded slash"},
	{"double-encoded slash", "/nodes/pve1%252Fstatus", "encoded slash"},
	{"encoded NUL", "/nodes/%00", "percent-encoding"},
	{"lone percent", "/nodes/pve1%", "percent-encoding"},
	{"empty segment", "/nodes//pve1/status", "empty segment"},
	{"trailing slash", "/nodes/pve1/status/", "empty segment"},
	{"root only", "/", "empty segment"},
	{"backslash", "/nodes/pve1\\status", "backslash"},
	{"backslash dot-dot", "/nodes\\..\\access", "backslash"},
	{"NUL", "/nodes/pve1\x00/status", "NUL"},
	{"newline", "/nodes/pve1\n/status", "control character"},
	{"header injection", "/nodes/pve1\r\nX-Injected: 1", "control character"},
	{"tab", "/nodes/pve1\t/status", "control character"},
	{"DEL", "/nodes/pve1\x7f", "control character"},
	{"fullwidth digit", "/nodes/pve\uff11/status", "non-ASCII"},
	{"fullwidth solidus", "/nodes\uff0fpve1", "non-ASCII"},
	{"one dot leader", "/nodes/\u2024\u2024/access", "non-ASCII"},
	{"RTL override", "/nodes/pve1/status\u202e", "non-ASCII"},
	{"zero-width space", "/nodes/pve1\u200b/status", "non-ASCII"},
	{"invalid UTF-8", "/nodes/\xff\xfe", "non-ASCII"},
	{"space", "/nodes/pve1 /status", "a space"},
	{"semicolon", "/nodes/pve1/qemu/100/config;x", "\";\""},
	{"shell", "/nodes/pve1/$(reboot)", "\"$\""},
	{"quote", "/nodes/pve1/'x'", "\"'\""},
	{"overlong", "/" + strings.Repeat("a", 300), "at most 256"},
	{"too many segments", strings.Repeat("/a", 13), "more than 12 segments"},
}

// TestGatewayHostilePaths: every hostile path is refused as invalid input,
// with a reason, before any request — for GET and for an approved write.
func TestGatewayHostilePaths(t *testing.T) {
	t.Parallel()
	if len(hostilePaths) < 30 {
		t.Fatalf("only %d hostile paths; the issue asks for at least 30", len(hostilePaths))
	}
	for _, tc := range hostilePaths {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			_, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: tc.path})
			assertGatewayRefused(t, e, err, proxmoxsafe.ErrInvalidInput, tc.mention)
			in := proxmoxsafe.APIRequestInput{Method: "POST", Path: tc.path, Approval: "APPROVE POST " + tc.path + " params=none"}
			_, err = e.client.APIRequest(t.Context(), in)
			assertGatewayRefused(t, e, err, proxmoxsafe.ErrInvalidInput, "")
		})
	}
}

func assertGatewayRefused(t *testing.T, e *env, err error, kind error, mention string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), mention) || !strings.Contains(err.Error(), "no action was taken") {
		t.Errorf("err = %q, want it to mention %q and that no action was taken", err, mention)
	}
	if got := e.requests(); len(got) != 0 {
		t.Errorf("upstream requests = %v, want none", reqLines(got))
	}
}

// denyCase is one request the deny list must stop.
type denyCase struct{ method, path string }

// deniedRequests covers every row of the deny list (internal/routes) with
// a concrete request; TestGatewayDenyTableCovered checks none is missing.
var deniedRequests = []denyCase{
	{"POST", "/access/users"}, {"PUT", "/access/acl"}, {"DELETE", "/access/users/u@pve/token/t"},
	{"POST", "/access/users/u@pve/token/t"}, {"POST", "/access/tfa/u@pve"}, {"PUT", "/access/password"},
	{"GET", "/access/ticket"}, {"POST", "/access/ticket"}, {"POST", "/access/domains"},
	{"POST", "/nodes/pve1/termproxy"}, {"GET", "/nodes/pve1/vncwebsocket"}, {"POST", "/nodes/pve1/spiceshell"}, {"POST", "/nodes/pve1/vncshell"},
	{"POST", "/nodes/pve1/execute"}, {"GET", "/nodes/pve1/execute"},
	{"POST", "/nodes/pve1/qemu/100/vncproxy"}, {"POST", "/nodes/pve1/lxc/200/termproxy"}, {"POST", "/nodes/pve1/qemu/100/spiceproxy"},
	{"GET", "/nodes/pve1/qemu/100/vncwebsocket"}, {"POST", "/nodes/pve1/qemu/100/mtunnel"}, {"GET", "/nodes/pve1/lxc/200/mtunnelwebsocket"},
	{"POST", "/nodes/pve1/qemu/100/monitor"}, {"PUT", "/nodes/pve1/qemu/100/sendkey"}, {"POST", "/nodes/pve1/qemu/100/remote_migrate"},
	{"POST", "/nodes/pve1/qemu/100/agent/exec"}, {"GET", "/nodes/pve1/qemu/100/agent/exec-status"}, {"GET", "/nodes/pve1/qemu/100/agent/file-read"},
	{"POST", "/nodes/pve1/qemu/100/agent/file-write"}, {"POST", "/nodes/pve1/qemu/100/agent/set-user-password"}, {"POST", "/nodes/pve1/qemu/100/agent"},
	{"GET", "/nodes/pve1/qemu/100/cloudinit/dump"}, {"GET", "/nodes/pve1/vzdump/extractconfig"}, {"GET", "/nodes/pve1/report"},
	{"POST", "/nodes/pve1/status"}, {"POST", "/nodes/pve1/stopall"}, {"POST", "/nodes/pve1/startall"}, {"POST", "/nodes/pve1/migrateall"},
	{"POST", "/nodes/pve1/suspendall"}, {"POST", "/nodes/pve1/wakeonlan"},
	{"POST", "/cluster/bulk-action/guest/shutdown"}, {"POST", "/cluster/bulk-action/guest/migrate"},
	{"POST", "/nodes/pve1/services/sshd/stop"}, {"POST", "/nodes/pve1/apt/update"}, {"PUT", "/nodes/pve1/network"}, {"POST", "/nodes/pve1/network"},
	{"POST", "/nodes/pve1/certificates/custom"}, {"PUT", "/nodes/pve1/dns"}, {"POST", "/nodes/pve1/hosts"}, {"PUT", "/nodes/pve1/time"},
	{"PUT", "/nodes/pve1/config"}, {"DELETE", "/nodes/pve1/subscription"}, {"PUT", "/nodes/pve1/firewall/options"}, {"POST", "/cluster/firewall/rules"},
	{"GET", "/nodes/pve1/syslog"}, {"GET", "/nodes/pve1/journal"},
	{"POST", "/cluster/config/nodes/pve4"}, {"POST", "/cluster/config/join"}, {"POST", "/cluster/acme/account"}, {"GET", "/cluster/acme/plugins"},
	{"GET", "/cluster/acme/plugins/dns1"}, {"POST", "/cluster/notifications/endpoints/webhook"}, {"GET", "/cluster/notifications/endpoints"}, {"GET", "/cluster/notifications/endpoints/webhook/hook1"},
	{"PUT", "/cluster/options"}, {"PUT", "/cluster/metrics/server/influx"},
	{"POST", "/cluster/mapping/pci"}, {"POST", "/cluster/jobs/realm-sync/nightly"}, {"PUT", "/cluster/jobs/realm-sync/nightly"},
	{"POST", "/storage"}, {"PUT", "/storage/local"}, {"DELETE", "/storage/local"},
	{"POST", "/nodes/pve1/storage/local/content"}, {"DELETE", "/nodes/pve1/storage/local/content/local:iso"}, {"POST", "/nodes/pve1/storage/local/upload"},
	{"POST", "/nodes/pve1/storage/local/download-url"}, {"GET", "/nodes/pve1/storage/pbs/file-restore/download"}, {"GET", "/nodes/pve1/storage/pbs/file-restore/list"},
	{"POST", "/nodes/pve1/disks/initgpt"}, {"DELETE", "/nodes/pve1/disks/wipedisk"}, {"POST", "/nodes/pve1/ceph/osd"}, {"POST", "/cluster/ceph/flags"},
	{"POST", "/nodes/pve1/aplinfo"}, {"GET", "/nodes/pve1/scan/nfs"}, {"GET", "/nodes/pve1/scan/pbs"}, {"GET", "/nodes/pve1/query-url-metadata"},
	{"GET", "/nodes/pve1/query-oci-repo-tags"},
	// Case does not get around it.
	{"POST", "/NODES/pve1/Execute"}, {"POST", "/Access/ACL"},
}

// TestGatewayDenyList: every denied request is refused with the reason
// even with gateway and gateway-write enabled and the exact phrase given:
// zero requests reach Proxmox.
func TestGatewayDenyList(t *testing.T) {
	t.Parallel()
	for _, tc := range deniedRequests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			var err error
			if tc.method == "GET" {
				_, err = e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: tc.path})
			} else {
				in := proxmoxsafe.APIRequestInput{Method: tc.method, Path: tc.path, Params: map[string]string{"x": "1"}}
				in.Approval, err = proxmoxsafe.GatewayPhrase(in)
				if err != nil {
					t.Fatal(err)
				}
				_, err = e.client.APIRequest(t.Context(), in)
				if recs := auditEvents(t, e); len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused || recs[0].Method != tc.method {
					t.Errorf("audit = %+v, want one refused record naming the method", recs)
				}
			}
			assertGatewayRefused(t, e, err, proxmoxsafe.ErrNotAllowed, "deny list")
		})
	}
}

// TestGatewayPolicy: class, read-only mode, node allowlist, protected
// guests and pools, and forbidden parameters — each refused before any
// request (zero mutating requests where a protection read is needed).
func TestGatewayPolicy(t *testing.T) {
	t.Parallel()
	post := func(path string, params map[string]string) proxmoxsafe.APIRequestInput {
		in := proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: params}
		in.Approval, _ = proxmoxsafe.GatewayPhrase(in)
		return in
	}
	noGateway := func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} }
	readOnly := func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true }
	byPool := func(c *proxmoxsafe.Config) { c.Policy.ProtectedPools = []string{"prod"} }
	byTag := func(c *proxmoxsafe.Config) { c.Policy.ProtectedTags = []string{"web"} }
	tests := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		get     *proxmoxsafe.APIGetInput
		write   proxmoxsafe.APIRequestInput
		mention string
		reads   bool // a protection read may precede the refusal
	}{
		{name: "get without the class", mod: noGateway, get: &proxmoxsafe.APIGetInput{Path: "/cluster/options"}, mention: `"gateway" class is not enabled`},
		{name: "write without the class", mod: noGateway, write: post("/cluster/ha/groups", nil), mention: `"gateway-write" class is not enabled`},
		{name: "write in read-only mode", mod: readOnly, write: post("/cluster/ha/groups", nil), mention: "read-only mode"},
		{name: "get on a node off the allowlist", get: &proxmoxsafe.APIGetInput{Path: "/nodes/pve3/status"}, mention: `node "pve3" is not on the node allowlist`},
		{name: "write on a node off the allowlist", write: post("/nodes/pve3/qemu/300/status/stop", nil), mention: `node "pve3"`},
		{name: "write with a target node off the allowlist", write: post("/nodes/pve1/qemu/101/migrate", map[string]string{"target": "pve3"}), mention: `node "pve3"`},
		{name: "write to a protected guest", write: post("/nodes/pve1/qemu/106/firewall/rules", map[string]string{"type": "in", "action": "ACCEPT"}), mention: "guest 106 is protected"},
		{name: "write naming a protected guest by vmid", write: post("/cluster/backup", map[string]string{"vmid": "106"}), mention: "guest 106 is protected"},
		{name: "disk moved onto a protected guest", write: post("/nodes/pve1/qemu/101/move_disk", map[string]string{"disk": "scsi1", "target-vmid": "106"}), mention: "deny list"},
		{name: "write naming a protected HA resource", write: post("/cluster/ha/resources", map[string]string{"sid": "vm:106", "state": "ignored"}), mention: "guest 106 is protected"},
		{name: "write to a guest protected by tag", mod: byTag, write: post("/nodes/pve1/qemu/100/firewall/rules", map[string]string{"type": "in", "action": "ACCEPT"}), mention: "protected by the operator", reads: true},
		{name: "write to a protected pool", mod: byPool, write: post("/pools/prod", map[string]string{"vms": "101"}), mention: "pool prod is protected"},
		{name: "raw QEMU args", write: post("/nodes/pve1/qemu/101/config", map[string]string{"args": "-x"}), mention: "parameter args is never sent"},
		{name: "host PCI passthrough", write: post("/nodes/pve1/qemu/101/config", map[string]string{"hostpci0": "01:00.0"}), mention: "parameter hostpci0"},
		{name: "a password", write: post("/nodes/pve1/qemu/101/config", map[string]string{"cipassword": "CANARY-PW-5e1d"}), mention: "parameter cipassword"},
		{name: "hook script", write: post("/nodes/pve1/lxc/200/config", map[string]string{"hookscript": "local:snippets/x"}), mention: "parameter hookscript"},
		{name: "host directory", write: post("/nodes/pve1/qemu/101/config", map[string]string{"virtiofs0": "dirid=share"}), mention: "parameter virtiofs0"},
		{name: "mount point", write: post("/nodes/pve1/lxc/200/config", map[string]string{"mp0": "/etc,mp=/x"}), mention: "parameter mp0"},
		{name: "bad parameter name", write: post("/cluster/ha/groups", map[string]string{"a b": "1"}), mention: "is not a Proxmox parameter name"},
		{name: "control character in a value", write: post("/cluster/ha/groups", map[string]string{"comment": "a\x1b[2Jb"}), mention: "control character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, tc.mod)
			var err error
			if tc.get != nil {
				_, err = e.client.APIGet(t.Context(), *tc.get)
			} else {
				_, err = e.client.APIRequest(t.Context(), tc.write)
			}
			if !errors.Is(err, proxmoxsafe.ErrNotAllowed) && !errors.Is(err, proxmoxsafe.ErrInvalidInput) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("err = %q, want it to mention %q and that no action was taken", err, tc.mention)
			}
			if got := e.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests = %v, want none", reqLines(got))
			}
			if got := e.requests(); !tc.reads && len(got) != 0 {
				t.Errorf("requests = %v, want none", reqLines(got))
			}
			if tc.get == nil {
				if recs := auditEvents(t, e); len(recs) != 1 || recs[0].Event != proxmoxsafe.AuditRefused {
					t.Errorf("audit = %+v, want one refused record", recs)
				}
				if strings.Contains(e.audit.String(), "CANARY-PW") {
					t.Errorf("the refused password reached the audit log: %s", e.audit.String())
				}
			}
		})
	}
}

// TestAPIGet: the exact path and query the fake saw, the answer as data.
func TestAPIGet(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	res, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/qemu", Params: map[string]string{"full": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.requests()
	if len(reqs) != 1 || reqLine(reqs[0]) != "GET /nodes/pve1/qemu" || reqs[0].RawPath != "/nodes/pve1/qemu" || reqs[0].Query.Encode() != "full=1" {
		t.Fatalf("requests = %+v, want exactly GET /nodes/pve1/qemu?full=1", reqs)
	}
	list, ok := res.Data.([]any)
	if !ok || len(list) == 0 || res.Method != "GET" || res.Path != "/nodes/pve1/qemu" {
		t.Fatalf("result = %+v, want the guest list", res)
	}
	for _, g := range list {
		if g.(map[string]any)["node"] != nil {
			continue
		}
		if _, ok := g.(map[string]any)["vmid"]; !ok {
			t.Errorf("entry without vmid: %v", g)
		}
	}
	// Read-only mode keeps the gateway's GET.
	ro := gatewayEnv(t, func(c *proxmoxsafe.Config) { c.Policy.ReadOnly = true })
	if !ro.client.Enabled(proxmoxsafe.ClassGateway) || ro.client.Enabled(proxmoxsafe.ClassGatewayWrite) {
		t.Errorf("read-only: gateway enabled %v, gateway-write enabled %v; want true, false",
			ro.client.Enabled(proxmoxsafe.ClassGateway), ro.client.Enabled(proxmoxsafe.ClassGatewayWrite))
	}
	if _, err := ro.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/cluster/resources", Params: map[string]string{"type": "vm"}}); err != nil {
		t.Errorf("read-only GET: %v", err)
	}
	// A UPID segment with a token user's "!" is escaped once, as Proxmox
	// expects, and reaches the task route.
	upid := "UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:automation@pve!mcp:"
	_, err = e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/tasks/" + upid + "/status"})
	last := e.requests()[len(e.requests())-1]
	if last.Path != "/nodes/pve1/tasks/"+upid+"/status" || !strings.Contains(last.RawPath, "%21") {
		t.Errorf("task read went to %q (raw %q), err %v", last.Path, last.RawPath, err)
	}
}

// TestAPIGetUnknownPath: Proxmox's own 501 for a path it does not know
// comes back as an APIError, after one GET.
func TestAPIGetUnknownPath(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	_, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/cluster/nonexistent"})
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 501 || !strings.Contains(ae.Message, "Method 'GET /cluster/nonexistent' not implemented") {
		t.Fatalf("err = %v, want Proxmox's 501", err)
	}
	if got := reqLines(e.requests()); len(got) != 1 || got[0] != "GET /cluster/nonexistent" {
		t.Errorf("requests = %v", got)
	}
}

// TestAPIGetRedacts: secret-bearing keys are redacted wherever they are,
// the token secret by value, and strings are sanitized — canaries must
// not come back.
func TestAPIGetRedacts(t *testing.T) {
	t.Parallel()
	const pw = "CANARY-PASSWORD-91c3"
	cluster := testCluster()
	for _, g := range cluster.Guests {
		if g.VMID == 101 {
			g.Config = map[string]string{
				"args":       "-fw_cfg name=opt/pw,string=" + pw,
				"sshkeys":    "ssh-ed25519%20AAAACANARY",
				"cipassword": pw,
				"smbios1":    "uuid=00000000-0000-0000-0000-000000000000,serial=" + pw,
				"mypassword": pw,
				"hookscript": "local:snippets/" + pw + ".sh",
				// Named by a segment of the one list (internal/redact).
				"api_key":     pw,
				"apikey":      pw,
				"access_key":  pw,
				"private_key": pw,
				"privatekey":  pw,
				"ssh_key":     pw,
				"psk":         pw,
				"pass":        pw,
				"db-pass":     pw,
				"pwd":         pw,
				"passphrase":  pw,
				"otp":         pw,
				// A ticket not at the start of a value, plain and URL-encoded
				// (not after "PVEAuthCookie=", which the client redacts
				// in every answer before the gateway sees it).
				"x-cookie":  "cookie: t=PVE:root@pam:6A1B2C3D::" + pw,
				"x-cookie2": "x PVE%3Aroot%40pam%3A6A1B2C3D%3A%3A" + pw,
				// Look-alikes stay.
				"bypass":      "shown-bypass",
				"passthrough": "shown-passthrough",
				"tags":        "ok\u202e;\x1b[31mred",
				"description": "token " + canary + " and\u200b " +
					strings.Repeat("x", 5000),
			}
		}
	}
	e := newEnvWith(t, cluster, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassGateway}
	})
	res, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: "/nodes/pve1/qemu/101/config"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	out := string(b)
	for _, leak := range []string{pw, canary, "AAAACANARY", "\u202e", "\x1b", "\u200b"} {
		if strings.Contains(out, leak) {
			t.Errorf("result contains %q: %s", leak, out)
		}
	}
	for _, k := range []string{"data.args", "data.sshkeys", "data.cipassword", "data.smbios1", "data.mypassword", "data.hookscript",
		"data.api_key", "data.apikey", "data.access_key", "data.private_key", "data.privatekey", "data.ssh_key", "data.psk",
		"data.pass", "data.db-pass", "data.pwd", "data.passphrase", "data.otp", "data.x-cookie", "data.x-cookie2"} {
		if !slices.Contains(res.Redacted, k) {
			t.Errorf("redacted = %v, want %s", res.Redacted, k)
		}
	}
	cfg := res.Data.(map[string]any)
	if cfg["args"] != proxmoxsafe.RedactedValue || cfg["name"] != "db1" {
		t.Errorf("config = %v", cfg)
	}
	if cfg["bypass"] != "shown-bypass" || cfg["passthrough"] != "shown-passthrough" {
		t.Errorf("config = %v, want bypass and passthrough shown (a segment, not a substring, names a secret)", cfg)
	}
	if !strings.Contains(strings.Join(res.Truncated, ","), "data.description") {
		t.Errorf("truncated = %v, want the long description", res.Truncated)
	}
}

// TestAPIRequestApproval: a write needs the phrase bound to method, path
// and parameter digest; a phrase for other parameters or another path is
// refused with zero mutating requests; the approved write is sent exactly
// once with the parameters, and audited before and after.
func TestAPIRequestApproval(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	ctx := t.Context()
	acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
	in := proxmoxsafe.APIRequestInput{Method: "POST", Path: gatewayGuestPath, Params: map[string]string{"action": "ACCEPT", "comment": "via gateway"}}
	phrase, err := proxmoxsafe.GatewayPhrase(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(phrase, "APPROVE POST "+gatewayGuestPath+" params=") || len(phrase) != len("APPROVE POST "+gatewayGuestPath+" params=")+16 {
		t.Fatalf("phrase = %q", phrase)
	}
	// No approval: the refusal names the phrase.
	_, err = e.client.APIRequest(ctx, in)
	var ae *proxmoxsafe.ApprovalError
	if !errors.As(err, &ae) || ae.Required != phrase {
		t.Fatalf("err = %v, want an ApprovalError naming %q", err, phrase)
	}
	// A phrase for other parameters, another path or another method.
	other := in
	other.Params = map[string]string{"action": "DROP", "comment": "via gateway"}
	otherPhrase, _ := proxmoxsafe.GatewayPhrase(other)
	for _, given := range []string{
		otherPhrase,
		strings.Replace(phrase, "/101/", "/100/", 1),
		strings.Replace(phrase, "POST", "PUT", 1),
		strings.ToLower(phrase),
		phrase + " ",
	} {
		in.Approval = given
		if _, err := e.client.APIRequest(ctx, in); !errors.As(err, &ae) || !ae.Given {
			t.Errorf("approval %q: err = %v, want a mismatch refusal", given, err)
		}
	}
	if got := e.fake.MutatingRequests(); len(got) != 0 {
		t.Fatalf("mutating requests after refusals = %v", reqLines(got))
	}
	// Plan: nothing sent, the phrase returned.
	in.Approval, in.Plan = "", true
	plan, err := e.client.APIRequest(ctx, in)
	if err != nil || plan.Plan == nil || plan.Plan.Approval != phrase || plan.Plan.Params["action"] != "ACCEPT" || len(e.fake.MutatingRequests()) != 0 {
		t.Fatalf("plan = %+v, err %v; want the phrase and nothing sent", plan, err)
	}
	in.Plan = false
	in.Approval = phrase
	res, err := e.client.APIRequest(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	muts := e.fake.MutatingRequests()
	if len(muts) != 1 || reqLine(muts[0]) != "POST "+gatewayGuestPath || muts[0].Form.Get("action") != "ACCEPT" || muts[0].Form.Get("comment") != "via gateway" || len(muts[0].Form) != 2 {
		t.Fatalf("mutating requests = %+v", muts)
	}
	if res.UPID != "" || res.Approver != "phrase" || res.Note != "" {
		t.Errorf("result = %+v", res)
	}
	recs := auditEvents(t, e)
	if got := strings.Join(eventNames(recs), ","); got != "refused,refused,refused,refused,refused,refused,approved,submitted" {
		t.Fatalf("audit events = %s", got)
	}
	sub := recs[len(recs)-1]
	wantParams := []string{"path=" + gatewayGuestPath, "params=" + strings.TrimPrefix(phrase, "APPROVE POST "+gatewayGuestPath+" params="), "action=ACCEPT", "comment=via gateway"}
	if sub.Op != proxmoxsafe.OpAPIRequest || sub.Method != "POST" || sub.Path != gatewayGuestPath || sub.UPID != res.UPID ||
		sub.VMID != 101 || strings.Join(sub.Params, "|") != strings.Join(wantParams, "|") || sub.Approver != "phrase" {
		t.Errorf("submitted record = %+v", sub)
	}
}

// TestAPIRequestDefaultApproval: without an operator choice, gateway-write
// is approved by a person only (elicit, grant): New refuses the class
// without those approvers rather than fall back to the phrase.
func TestAPIRequestDefaultApproval(t *testing.T) {
	t.Parallel()
	if got := proxmoxsafe.DefaultApprovals(proxmoxsafe.ClassGatewayWrite); len(got) != 2 || got[0] != proxmoxsafe.LevelElicit || got[1] != proxmoxsafe.LevelGrant {
		t.Errorf("DefaultApprovals(gateway-write) = %v, want elicit, grant", got)
	}
	_, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
		Policy: proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGatewayWrite}},
		Audit:  auditlog.New(io.Discard, nil),
	})
	var ce *proxmoxsafe.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "gateway-write") {
		t.Errorf("New = %v, want a ConfigError about gateway-write's default approvers", err)
	}
}

// TestAPIRequestAuditFailClosed: when the approved record cannot be
// written, nothing is sent.
func TestAPIRequestAuditFailClosed(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, func(c *proxmoxsafe.Config) { c.Audit = failingSink{} })
	acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
	in := proxmoxsafe.APIRequestInput{Method: "POST", Path: gatewayGuestPath, Params: map[string]string{"action": "ACCEPT"}}
	in.Approval, _ = proxmoxsafe.GatewayPhrase(in)
	_, err := e.client.APIRequest(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrAudit) {
		t.Fatalf("err = %v, want ErrAudit", err)
	}
	if got := e.fake.MutatingRequests(); len(got) != 0 {
		t.Errorf("mutating requests = %v", reqLines(got))
	}
}

// failingSink refuses every record, like a full disk.
type failingSink struct{}

func (failingSink) Record(context.Context, proxmoxsafe.AuditRecord) error {
	return errors.New("disk full")
}

// TestAPIRequestGrant: at the grant level a write gets a code; once the
// operator approves it, the same request is sent exactly once, and the
// grant covers neither other parameters nor a second send.
func TestAPIRequestGrant(t *testing.T) {
	t.Parallel()
	store, err := grant.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := gatewayEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Approvals[proxmoxsafe.ClassGatewayWrite] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelGrant}
		c.Approvers = []proxmoxsafe.Approver{store}
	})
	ctx := t.Context()
	acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
	in := proxmoxsafe.APIRequestInput{Method: "POST", Path: gatewayGuestPath, Params: map[string]string{"action": "ACCEPT"}}
	_, err = e.client.APIRequest(ctx, in)
	var gre *grant.RequiredError
	if !errors.As(err, &gre) {
		t.Fatalf("err = %v, want a grant code", err)
	}
	if _, err := store.Decide(gre.Grant.Code, true, "ops"); err != nil {
		t.Fatal(err)
	}
	other := in
	other.Params = map[string]string{"action": "DROP"}
	if _, err := e.client.APIRequest(ctx, other); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Errorf("other parameters: err = %v, want approval required", err)
	}
	if len(e.fake.MutatingRequests()) != 0 {
		t.Fatalf("mutating requests before the approved call: %v", reqLines(e.fake.MutatingRequests()))
	}
	res, err := e.client.APIRequest(ctx, in)
	if err != nil || res.Approver != "grant" {
		t.Fatalf("approved call: %+v, %v", res, err)
	}
	if _, err := e.client.APIRequest(ctx, in); !errors.Is(err, proxmoxsafe.ErrApprovalRequired) {
		t.Errorf("second send: err = %v, want approval required (a grant is single use)", err)
	}
	if got := reqLines(e.fake.MutatingRequests()); len(got) != 1 || got[0] != "POST "+gatewayGuestPath {
		t.Errorf("mutating requests = %v, want the one approved POST", got)
	}
	if rec := auditEvents(t, e); rec[len(rec)-1].Operator != "ops" && rec[len(rec)-2].Operator != "ops" {
		t.Errorf("audit does not name the operator: %+v", rec[len(rec)-2:])
	}
}

// TestAPIGetEchoedSecretParam: Proxmox's 400 answer quotes parameter
// values ("value '…' does not match"); a query parameter of a read that
// the gateway redacts by its name (here a "-key" parameter) must not come
// back through that echo, neither in the error nor in the logs. (A write
// with such a parameter is refused before anything is sent:
// TestGatewayWriteSecretParams.)
func TestAPIGetEchoedSecretParam(t *testing.T) {
	t.Parallel()
	const secret = "CANARY-ECHOED-KEY-7d2a"
	e := gatewayEnv(t, nil)
	in := proxmoxsafe.APIGetInput{Path: "/cluster/ha/groups", Params: map[string]string{"group": "g1", "api-key": secret}}
	e.fake.InjectFault(proxmoxtest.Fault{Method: "GET", Path: "/cluster/ha/groups", Status: 400, Reason: "Parameter verification failed.",
		Body: []byte(`{"data":null,"message":"value '` + secret + `' is wrong","errors":{"api-key":"value '` + secret + `' does not match"}}`)})
	_, err := e.client.APIGet(t.Context(), in)
	var ae *proxmoxsafe.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 400 {
		t.Fatalf("err = %v, want Proxmox's 400", err)
	}
	if got := reqLines(e.requests()); len(got) != 1 || got[0] != "GET /cluster/ha/groups" {
		t.Fatalf("requests = %v, want the one read", got)
	}
	for where, s := range map[string]string{"error": err.Error() + fmt.Sprint(ae.Params), "logs": e.logs.String()} {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the echoed secret: %s", where, s)
		}
	}
	if !strings.Contains(err.Error(), proxmoxsafe.RedactedValue) {
		t.Errorf("err = %v, want the echo redacted", err)
	}
}
