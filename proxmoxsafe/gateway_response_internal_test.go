package proxmoxsafe

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

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

// TestGatewayShapeNameValuePairs: the {key, value} entry rule holds for
// every name/value shape, not only Proxmox's pending list: a setting
// named by "name", "id", "option", "param", … whose name is a secret's
// has every value member redacted ({"name":"password","value":X} was
// shown), in any case of the member names; an entry whose setting is not
// a secret, and an object that merely has a name (a guest), are kept.
func TestGatewayShapeNameValuePairs(t *testing.T) {
	t.Parallel()
	const pw = "CANARY-PAIR-77aa"
	raw := `[{"name":"password","value":"` + pw + `"},
	{"Name":"db_pass","Value":"` + pw + `","type":"string"},
	{"id":"api-token","val":"` + pw + `"},
	{"option":"client_secret","default":"` + pw + `","current":"` + pw + `"},
	{"param":"cipassword","values":["` + pw + `"]},
	{"property":"encryption-key","pending":{"x":"` + pw + `"}},
	{"name":"cores","value":"4"},
	{"name":"db-secret-store","vmid":100,"status":"running"}]`
	res := shapeAnswer(&gatewayReq{method: "GET", segs: []string{"cluster", "options"}}, []byte(raw))
	out := fmt.Sprint(res.Data)
	if strings.Contains(out, pw) {
		t.Errorf("answer leaks %s: %s", pw, out)
	}
	list := res.Data.([]any)
	for i, name := range []string{"password", "db_pass", "api-token", "client_secret", "cipassword", "encryption-key"} {
		e := list[i].(map[string]any)
		found := false
		for _, v := range e {
			found = found || v == name
		}
		if !found {
			t.Errorf("entry %d = %v: the setting's name %q should stay readable", i, e, name)
		}
	}
	if e := list[1].(map[string]any); e["type"] != "string" {
		t.Errorf("entry 1 = %v: a member that holds no value stays", e)
	}
	if e := list[6].(map[string]any); e["value"] != "4" {
		t.Errorf("cores = %v, want its value", e)
	}
	if e := list[7].(map[string]any); e["status"] != "running" || e["name"] != "db-secret-store" {
		t.Errorf("guest = %v, want it as it is (no value member)", e)
	}
	want := []string{"data[0].value", "data[1].Value", "data[2].val", "data[3].current", "data[3].default", "data[4].values", "data[5].pending"}
	if !slices.Equal(res.Redacted, want) {
		t.Errorf("redacted = %v\nwant %v", res.Redacted, want)
	}
}
