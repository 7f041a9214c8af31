package proxmoxsafe

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"
)

// captureTransport stands in for the network and keeps the escaped path
// of every request that got past the guard.
type captureTransport struct {
	mu    sync.Mutex
	paths []string
}

func (c *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paths = append(c.paths, req.Method+" "+req.URL.EscapedPath())
	return nil, errors.New("network reached")
}

func (c *captureTransport) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.paths
	c.paths = nil
	return out
}

// gatewayClient is a Client with every class, the gateway's included,
// enabled on pve1, gateway-write approved with no approval (so only the
// path rules, the deny list and the guard decide), over captureTransport.
func gatewayClient(t testing.TB, readOnly bool) (*Client, *captureTransport) {
	t.Helper()
	net := &captureTransport{}
	c, err := New(Config{
		URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
		HTTPClient: &http.Client{Transport: net},
		Policy: Policy{AllowedNodes: []string{"pve1"}, Classes: slices.Clone(classOrder), ReadOnly: readOnly,
			Approvals: map[Class][]ApprovalLevel{ClassGatewayWrite: {LevelNone}, ClassDestroy: {LevelPhrase}}},
		Audit: discardAudit{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, net
}

// expand turns a deny pattern into concrete paths: "*" becomes a value
// that fits (pve1, 100, local), each "a|b" every alternative, a final
// "**" nothing and two more segments.
func expand(pattern string) []string {
	out := []string{""}
	for i, p := range strings.Split(pattern[1:], "/") {
		var alts []string
		switch {
		case p == "**":
			var next []string
			for _, o := range out {
				next = append(next, o, o+"/x/y")
			}
			return next
		case p == "*" && i == 1:
			alts = []string{"pve1"}
		case p == "*" && i == 3:
			alts = []string{"100"}
		case p == "*":
			alts = []string{"local"}
		default:
			alts = strings.Split(p, "|")
		}
		var next []string
		for _, o := range out {
			for _, a := range alts {
				next = append(next, o+"/"+a)
			}
		}
		out = next
	}
	return out
}

// TestGatewayGuardDenyTable: the transport guard refuses every request on
// the deny list by itself — raw requests, below the library's checks —
// with every class enabled; and the library refuses the same before any
// request. Every row of the table is expanded, so a new row is covered.
func TestGatewayGuardDenyTable(t *testing.T) {
	t.Parallel()
	c, net := gatewayClient(t, false)
	n := 0
	for _, r := range routes.DenyRules() {
		methods := []string{http.MethodPost, http.MethodPut, http.MethodDelete}
		if r.Scope == routes.DenyAll {
			methods = append(methods, http.MethodGet)
		}
		for _, p := range expand(r.Pattern) {
			for _, m := range methods {
				n++
				err := c.api.Do(t.Context(), m, pve.Path(strings.Split(p[1:], "/")...), url.Values{}, nil)
				if got := net.take(); len(got) != 0 || !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "deny list") {
					t.Errorf("guard: %s %s reached %v, err %v; want a deny-list refusal and nothing sent", m, p, got, err)
				}
				if m == http.MethodGet {
					_, err = c.APIGet(t.Context(), APIGetInput{Path: p})
				} else {
					_, err = c.APIRequest(t.Context(), APIRequestInput{Method: m, Path: p})
				}
				if got := net.take(); len(got) != 0 || !errors.Is(err, ErrNotAllowed) {
					t.Errorf("library: %s %s reached %v, err %v; want a refusal and nothing sent", m, p, got, err)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d denied requests checked", n)
	}
}

// TestGatewayGuardRoutes: what the gateway's guard routes let through.
func TestGatewayGuardRoutes(t *testing.T) {
	t.Parallel()
	gwOnly := Policy{AllowedNodes: []string{"pve1"}, Classes: []Class{ClassGateway}}
	tests := []struct {
		name, method, path string
		policy             Policy
		readOnly           bool
		pass               bool
	}{
		{"gateway GET of any path", "GET", "/cluster/options", gwOnly, false, true},
		{"gateway GET on an allowed node", "GET", "/nodes/pve1/qemu/100/pending", gwOnly, false, true},
		{"gateway GET on another node", "GET", "/nodes/pve2/qemu/100/pending", gwOnly, false, false},
		{"gateway POST without gateway-write", "POST", "/cluster/ha/groups", gwOnly, false, false},
		{"gateway-write POST", "POST", "/cluster/ha/groups", Policy{}, false, true},
		{"gateway-write DELETE", "DELETE", "/nodes/pve1/qemu/100", Policy{}, false, true},
		{"gateway-write PATCH", "PATCH", "/cluster/ha/groups", Policy{}, false, false},
		{"read-only keeps the gateway GET", "GET", "/cluster/options", Policy{}, true, true},
		{"read-only refuses gateway-write", "POST", "/cluster/ha/groups", Policy{}, true, false},
		{"escaped slash", "GET", "/nodes/pve1%2Fqemu", Policy{}, false, false},
		{"escaped dot-dot", "GET", "/cluster/%2E%2E/access/ticket", Policy{}, false, false},
		{"escaped backslash", "GET", "/cluster/a%5Cb", Policy{}, false, false},
		{"escaped space", "GET", "/cluster/a%20b", Policy{}, false, false},
		{"denied read", "GET", "/nodes/pve1/qemu/100/cloudinit/dump", Policy{}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c *Client
			var net *captureTransport
			if tc.policy.Classes != nil {
				net = &captureTransport{}
				var err error
				c, err = New(Config{URL: "https://pve.example:8006", TokenID: "a@pve!tok", TokenSecret: "s",
					HTTPClient: &http.Client{Transport: net}, Policy: tc.policy})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				c, net = gatewayClient(t, tc.readOnly)
			}
			req, err := http.NewRequestWithContext(t.Context(), tc.method, "https://pve.example:8006/api2/json"+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.api.HTTP.Transport.RoundTrip(req)
			got := net.take()
			if (len(got) == 1) != tc.pass {
				t.Fatalf("%s %s reached the network: %v (err %v), want %v", tc.method, tc.path, got, err, tc.pass)
			}
			if !tc.pass && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("err = %v, want ErrNotAllowed", err)
			}
		})
	}
}

// TestGatewayShape: the redaction by key name wherever a key is, ticket
// values under any key, and the bounds.
func TestGatewayShape(t *testing.T) {
	t.Parallel()
	raw := `{"ticket":"PVE:u@pve:5FBE5E6D::c2ln","CSRFPreventionToken":"5FBE5E6D:abc","cap":{"vms":{"VM.Audit":1}},
	"list":[{"name":"a","password":"p1"},{"nested":{"deep":{"client-key":"k","encryption-key":"e","keyring":"r"}}}],
	"other":"PVEVNC:00000001::cGFzcw==","value":"tokensecret","sshkeys":"ssh-rsa%20AAAA","smbios1":"uuid=00000000-0000-0000-0000-000000000000",
	"big":[` + strings.TrimSuffix(strings.Repeat("1,", MaxGatewayItems+5), ",") + `],"n":1.5,"b":true,"nil":null}`
	res := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"cluster", "x"}}, []byte(raw))
	wantRedacted := []string{"data.CSRFPreventionToken", "data.list[0].password", "data.list[1].nested.deep.client-key",
		"data.list[1].nested.deep.encryption-key", "data.list[1].nested.deep.keyring", "data.other", "data.sshkeys", "data.ticket"}
	if !slices.Equal(res.Redacted, wantRedacted) {
		t.Errorf("redacted = %v\nwant %v", res.Redacted, wantRedacted)
	}
	d := res.Data.(map[string]any)
	if d["value"] != "tokensecret" || d["smbios1"] == RedactedValue || len(d["big"].([]any)) != MaxGatewayItems {
		t.Errorf("data = %v", d)
	}
	if !slices.Contains(res.Truncated, "data.big (500 of 505 items)") {
		t.Errorf("truncated = %v", res.Truncated)
	}
	// Under /access, "value" is a created token's secret.
	acc := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"access", "users"}}, []byte(raw))
	if acc.Data.(map[string]any)["value"] != RedactedValue {
		t.Errorf("/access value not redacted: %v", acc.Data)
	}
	// Too large after shaping: left out whole.
	huge := `[` + strings.TrimSuffix(strings.Repeat(`"`+strings.Repeat("a", 2000)+`",`, 400), ",") + `]`
	if r := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"x"}}, []byte(huge)); !r.Omitted || r.Data != nil || !strings.Contains(r.Note, "narrow") {
		t.Errorf("huge answer: omitted %v, note %q", r.Omitted, r.Note)
	}
	// Deep nesting is cut.
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	if r := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"x"}}, []byte(deep)); len(r.Truncated) != 1 {
		t.Errorf("deep answer: truncated %v", r.Truncated)
	}
}

// TestGatewaySecretKeysNamed: the keys gatewaySecretKeys listed before
// the one list of internal/redact and endsInKey covered them are still
// redacted (the map keeps only what no other rule covers), in any case.
func TestGatewaySecretKeysNamed(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"ticket", "CSRFPreventionToken", "keyring", "encryption-key", "master-pubkey", "key",
		"client-key", "private-key", "privkey", "cert-key", "tfa", "KEYRING", "Cert-Key"} {
		if !gatewaySecret(k, "x", false) {
			t.Errorf("gatewaySecret(%q) = false, want true", k)
		}
	}
}

// TestGatewayShapeRealmTFA: a realm's tfa property string (GET
// /access/domains/{realm}, which Sys.Audit may read) carries the Yubico
// API key as "key=…", which neither the name nor the free-text rules
// caught; it is redacted whole, the rest of the realm shown.
func TestGatewayShapeRealmTFA(t *testing.T) {
	t.Parallel()
	raw := `{"realm":"yk","type":"pve","comment":"office","tfa":"type=yubico,id=42,key=CANARYyubicokey,url=https://api.example/verify"}`
	res := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"access", "domains", "yk"}}, []byte(raw))
	if b, _ := json.Marshal(res.Data); strings.Contains(string(b), "CANARY") {
		t.Errorf("the Yubico API key came back: %s", b)
	}
	if d := res.Data.(map[string]any); d["tfa"] != RedactedValue || d["comment"] != "office" || !slices.Equal(res.Redacted, []string{"data.tfa"}) {
		t.Errorf("data = %v, redacted = %v; want tfa redacted, the rest shown", d, res.Redacted)
	}
}

// A user's "keys" under /access (a realm's second factor: Yubico ids, or
// OATH secrets) is redacted; elsewhere a member named keys is shown.
func TestGatewayShapeUserKeys(t *testing.T) {
	t.Parallel()
	raw := `[{"userid":"u@pve","enable":1,"keys":"CANARYtotpsecret"}]`
	res := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"access", "users"}}, []byte(raw))
	if b, _ := json.Marshal(res.Data); strings.Contains(string(b), "CANARY") {
		t.Errorf("the user's TFA keys came back: %s", b)
	}
	res = shapeAnswer(&gatewayReq{method: "GET", segs: []string{"nodes", "pve1", "x"}}, []byte(`{"keys":"shown"}`))
	if d := res.Data.(map[string]any); d["keys"] != "shown" {
		t.Errorf("keys outside /access = %v, want it shown", d["keys"])
	}
}

// FuzzGatewayPath: for any path the gateway accepts, the request that
// leaves the client (through the guard, escaped) carries exactly the
// segments checked, and never one on the deny list; a path the library
// refuses reaches nothing. Seeds: testdata/fuzz/FuzzGatewayPath.
func FuzzGatewayPath(f *testing.F) {
	for _, s := range []string{"/cluster/resources", "/nodes/pve1/qemu/100/config", "/nodes/pve1/tasks/UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:a@pve!tok:/status",
		"/cluster/ha/resources/vm:100", "/access/users/u@pve", "/nodes/pve1/qemu/100/agent/exec", "/nodes/%2e%2e/access", "/a/../b", "//x", "/x?y", "/pools/a,b+c=d~e"} {
		f.Add(s)
	}
	c, net := gatewayClient(f, false)
	f.Fuzz(func(t *testing.T, p string) {
		segs, perr := parseGatewayPath(p)
		if perr == nil {
			if gatewayCanonical(segs) != p {
				t.Fatalf("canonical %q != input %q", gatewayCanonical(segs), p)
			}
			got, why := routes.Segments(pve.Path(segs...))
			if why != "" || !slices.Equal(got, segs) {
				t.Fatalf("escaped %q splits to %q (%s), want %q", pve.Path(segs...), got, why, segs)
			}
		}
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			var err error
			if m == http.MethodGet {
				_, err = c.APIGet(t.Context(), APIGetInput{Path: p})
			} else {
				_, err = c.APIRequest(t.Context(), APIRequestInput{Method: m, Path: p})
			}
			sent := net.take()
			if perr != nil || errors.Is(err, ErrNotAllowed) || errors.Is(err, ErrInvalidInput) {
				if len(sent) != 0 {
					t.Fatalf("%s %q refused (%v) but sent %v", m, p, err, sent)
				}
				continue
			}
			if len(sent) != 1 {
				t.Fatalf("%s %q: sent %v (err %v), want exactly one request", m, p, sent, err)
			}
			gotMethod, escaped, _ := strings.Cut(sent[0], " ")
			rest, ok := strings.CutPrefix(escaped, "/api2/json")
			got, why := routes.Segments(rest)
			if gotMethod != m || !ok || why != "" || !slices.Equal(got, segs) {
				t.Fatalf("%s %q went out as %q, segments %q, want %q", m, p, sent[0], got, segs)
			}
			if r := deniedBy(m, got); r != nil {
				t.Fatalf("%s %q went out although %s denies it", m, p, r.Pattern)
			}
		}
	})
}

// TestGatewayShapeKeyValueEntries: GET …/pending (and …/cloudinit) answer
// one {key, value, pending, delete} object per config key (schema
// vm_pending), so the config key is a value, not a member name. The value
// and the pending value of a key GuestConfig redacts are redacted here
// too, and the key names stay readable.
func TestGatewayShapeKeyValueEntries(t *testing.T) {
	t.Parallel()
	const pw = "CANARY-PENDING-5e1d"
	raw := `[{"key":"args","value":"-fw_cfg name=opt/pw,string=` + pw + `"},
	{"key":"hookscript","value":"local:snippets/a.sh","pending":"local:snippets/` + pw + `.sh"},
	{"key":"sshkeys","pending":"ssh-ed25519%20` + pw + `"},
	{"key":"smbios1","value":"uuid=00000000-0000-0000-0000-000000000000,serial=` + pw + `"},
	{"key":"cipassword","value":"**********","pending":"` + pw + `"},
	{"key":"cores","value":"2","pending":"4"},
	{"key":"digest","value":"0123abcd"}]`
	for _, typ := range []string{"qemu", "lxc"} {
		res := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"nodes", "pve1", typ, "101", "pending"}}, []byte(raw))
		out := fmt.Sprint(res.Data)
		if strings.Contains(out, pw) {
			t.Errorf("%s: answer leaks %s: %s", typ, pw, out)
		}
		list := res.Data.([]any)
		for i, want := range []string{"args", "hookscript", "sshkeys", "smbios1", "cipassword", "cores", "digest"} {
			if got := list[i].(map[string]any)["key"]; got != want {
				t.Errorf("%s: entry %d key = %v, want %q (a key name is not a secret)", typ, i, got, want)
			}
		}
		if cores := list[5].(map[string]any); cores["value"] != "2" || cores["pending"] != "4" {
			t.Errorf("%s: cores = %v, want its values", typ, cores)
		}
		wantRedacted := []string{"data[0].value", "data[1].pending", "data[1].value", "data[2].pending", "data[3].value", "data[4].pending", "data[4].value"}
		if !slices.Equal(res.Redacted, wantRedacted) {
			t.Errorf("%s: redacted = %v\nwant %v", typ, res.Redacted, wantRedacted)
		}
	}
}

// TestGatewaySecretsScannedOnce: a gateway request's parameters are
// checked for secrets once (secretWriteParam runs once per parameter),
// whether the write is sent, planned or refused: the policy step, the
// effect and the plan shown to the approver, the audit records and the
// redaction of an echo all read the one scan. Before, checkGatewaySecrets
// ran twice per write and each view of a parameter checked it again, up
// to six times per parameter. Not parallel: secretWriteChecks counts for
// the whole package.
func TestGatewaySecretsScannedOnce(t *testing.T) {
	c, _ := gatewayClient(t, false)
	params := map[string]string{"group": "g1", "comment": "plain", "nodes": "pve1"}
	for _, tc := range []struct {
		name string
		in   APIRequestInput
		n    int64
	}{
		{"sent", APIRequestInput{Method: "POST", Path: "/cluster/ha/groups", Params: params}, 3},
		{"planned", APIRequestInput{Method: "POST", Path: "/cluster/ha/groups", Params: params, Plan: true}, 3},
		{"refused for a secret", APIRequestInput{Method: "POST", Path: "/cluster/ha/groups", Params: map[string]string{"group": "g1", "psk": "wifi2026"}}, 2},
	} {
		before := secretWriteChecks.Load()
		_, err := c.APIRequest(t.Context(), tc.in)
		if got := secretWriteChecks.Load() - before; got != tc.n {
			t.Errorf("%s (err %v): %d secret checks, want %d (one per parameter)", tc.name, err, got, tc.n)
		}
	}
	r := &gatewayReq{method: "POST", segs: []string{"cluster", "ha", "groups"}, params: url.Values{"group": {"g1"}, "token": {"x"}}}
	before := secretWriteChecks.Load()
	for range 3 {
		if checkGatewaySecrets(r) == nil || !r.secretParam("token") || r.secretParam("group") {
			t.Fatal("the scan lost the secret parameter")
		}
	}
	if got := secretWriteChecks.Load() - before; got != 2 {
		t.Errorf("three checks of one request ran %d secret checks, want 2 (one scan)", got)
	}
}
