package proxmoxsafe_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// secretWrites are gateway writes with one parameter whose value is a
// secret, by the parameter's name (what the gateway redacts in answers)
// or by the value's shape (a ticket, a secret-looking argument). Each
// secret is a low-entropy guess an observer could try offline.
var secretWrites = []struct {
	name   string
	in     proxmoxsafe.APIRequestInput
	param  string // the parameter the refusal names
	secret string // its value
}{
	{"a -key parameter (PowerDNS API key)", post("/cluster/sdn/dns", map[string]string{"dns": "pdns", "type": "powerdns", "url": "https://dns.example/api/v1/servers/localhost", "key": "hunter2"}), "key", "hunter2"},
	{"a name ending in -key", post("/cluster/ha/groups", map[string]string{"group": "g1", "api-key": "123456"}), "api-key", "123456"},
	{"a token", post("/cluster/ha/groups", map[string]string{"group": "g1", "token": "letmein"}), "token", "letmein"},
	{"a forbidden password", post("/nodes/pve1/qemu/101/config", map[string]string{"cipassword": "summer2026"}), "cipassword", "summer2026"},
	{"cloud-init SSH keys", put("/nodes/pve1/qemu/101/config", map[string]string{"sshkeys": "ssh-ed25519%20AAAAC3Nz"}), "sshkeys", "ssh-ed25519%20AAAAC3Nz"},
	{"a value parameter", post("/cluster/ha/groups", map[string]string{"group": "g1", "value": "qwerty"}), "value", "qwerty"},
	{"a ticket under another name", post("/cluster/ha/groups", map[string]string{"group": "g1", "comment": "PVE:root@pam:6A1B2C3D::c2ln"}), "comment", "PVE:root@pam:6A1B2C3D::c2ln"},
	{"a password quoted in free text", post("/cluster/ha/groups", map[string]string{"group": "g1", "comment": "password: dragon"}), "comment", "password: dragon"},
	// Names that name a secret by a whole segment or two (internal/redact),
	// none caught before.
	{"api_key", haGroup("api_key", "k3yk3y"), "api_key", "k3yk3y"},
	{"apikey", haGroup("apikey", "k3yk3y"), "apikey", "k3yk3y"},
	{"x-api-key", haGroup("x-api-key", "k3yk3y"), "x-api-key", "k3yk3y"},
	{"access_key", haGroup("access_key", "AKIAEXAMPLE"), "access_key", "AKIAEXAMPLE"},
	{"private_key", haGroup("private_key", "MIIEvQIBADAN"), "private_key", "MIIEvQIBADAN"},
	{"privatekey", haGroup("privatekey", "MIIEvQIBADAN"), "privatekey", "MIIEvQIBADAN"},
	{"ssh_key", haGroup("ssh_key", "MIIEvQIBADAN"), "ssh_key", "MIIEvQIBADAN"},
	{"psk", haGroup("psk", "wifi2026"), "psk", "wifi2026"},
	{"pass", haGroup("pass", "dragon"), "pass", "dragon"},
	{"db_pass", haGroup("db_pass", "dragon"), "db_pass", "dragon"},
	{"pass-file", haGroup("pass-file", "dragon"), "pass-file", "dragon"},
	{"pwd", haGroup("pwd", "dragon"), "pwd", "dragon"},
	{"PWD in capitals", haGroup("PWD", "dragon"), "PWD", "dragon"},
	{"passphrase", haGroup("passphrase", "correct horse"), "passphrase", "correct horse"},
	{"otp", haGroup("otp", "123456"), "otp", "123456"},
	// Values that hold a ticket not at their start, or one URL-encoded as
	// a cookie value (the ticket expression was anchored at the start).
	{"a ticket in a cookie header", haGroup("comment", "cookie: PVEAuthCookie=PVE:root@pam:6A1B2C3D::c2lnbmF0dXJl"), "comment", "cookie: PVEAuthCookie=PVE:root@pam:6A1B2C3D::c2lnbmF0dXJl"},
	{"a ticket after a word", haGroup("comment", "x PVE:root@pam:6A1B2C3D::c2lnbmF0dXJl"), "comment", "x PVE:root@pam:6A1B2C3D::c2lnbmF0dXJl"},
	{"a URL-encoded ticket", haGroup("comment", "PVEAuthCookie=PVE%3Aroot%40pam%3A6A1B2C3D%3A%3Ac2lnbmF0dXJl"), "comment", "PVEAuthCookie=PVE%3Aroot%40pam%3A6A1B2C3D%3A%3Ac2lnbmF0dXJl"},
	// Values that quote a secret under one of the new names.
	{"a pass quoted in free text", haGroup("comment", "DB_PASS=dragon"), "comment", "DB_PASS=dragon"},
	{"an API key header in free text", haGroup("comment", "x-api-key: k3yk3y"), "comment", "x-api-key: k3yk3y"},
}

// haGroup is an HA group creation with one more parameter.
func haGroup(k, v string) proxmoxsafe.APIRequestInput {
	return post("/cluster/ha/groups", map[string]string{"group": "g1", k: v})
}

func post(path string, params map[string]string) proxmoxsafe.APIRequestInput {
	return proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: params}
}

func put(path string, params map[string]string) proxmoxsafe.APIRequestInput {
	return proxmoxsafe.APIRequestInput{Method: "PUT", Path: path, Params: params}
}

// secretTraces are what confirms a guessed value to whoever reads an
// output: the value, the gateway's parameter digest as anyone recomputes
// it from the guess (the first 16 hex digits of the SHA-256 of the
// parameters' url.Values encoding), and the arguments digest of the call.
func secretTraces(t *testing.T, in proxmoxsafe.APIRequestInput, secret string) map[string]string {
	t.Helper()
	args, err := proxmoxsafe.ArgumentsDigest(proxmoxsafe.OpAPIRequest, in)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"the secret": secret, "its parameter digest": gatewayParamDigest(in.Params), "its arguments digest": args}
}

// unkeyedPhrase is the phrase a gateway that accepted the write would
// require: what a model would type to approve it.
func unkeyedPhrase(in proxmoxsafe.APIRequestInput, digest string) string {
	return "APPROVE " + in.Method + " " + in.Path + " params=" + digest
}

// TestGatewayWriteSecretParams: a gateway write with a parameter that is
// a secret is refused at the policy step — whether it carries the phrase
// a model would compute, asks for a plan or carries no approval — with an
// error naming the parameter (never its value) and saying that nothing
// was done; zero upstream requests; and neither the value nor any digest
// of it (the parameter digest, the arguments digest) reaches the error,
// the audit record, the logs or GatewayPhrase. Before, such a write was
// approved with the secret shown as [redacted] to the approver and its
// unkeyed digest in the phrase, the plan and the audit record, where a
// guess could be confirmed offline; the refused forbidden names
// (cipassword) left the digest in the refusal's audit record.
func TestGatewayWriteSecretParams(t *testing.T) {
	t.Parallel()
	for _, tc := range secretWrites {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			traces := secretTraces(t, tc.in, tc.secret)
			withPhrase := tc.in
			withPhrase.Approval = unkeyedPhrase(tc.in, traces["its parameter digest"])
			planOnly := tc.in
			planOnly.Plan = true
			var outputs []string
			for _, in := range []proxmoxsafe.APIRequestInput{tc.in, withPhrase, planOnly} {
				res, err := e.client.APIRequest(t.Context(), in)
				if !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
					t.Fatalf("approval %q plan %v: result %+v, err = %v, want refused as not allowed", in.Approval, in.Plan, res, err)
				}
				for _, want := range []string{"parameter " + tc.param + " is never sent through the gateway", "nothing was sent", "no action was taken"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err = %q, want it to say %q", err, want)
					}
				}
				outputs = append(outputs, err.Error())
			}
			if got := e.requests(); len(got) != 0 {
				t.Errorf("requests = %v, want none", reqLines(got))
			}
			recs := auditEvents(t, e)
			if len(recs) != 3 {
				t.Fatalf("audit = %+v, want three refused records", recs)
			}
			for _, r := range recs {
				if r.Event != proxmoxsafe.AuditRefused || r.Path != tc.in.Path || !strings.Contains(strings.Join(r.Params, " "), "params="+proxmoxsafe.RedactedValue) {
					t.Errorf("record = %+v, want a refusal naming the path, its parameter digest withheld", r)
				}
			}
			phrase, err := proxmoxsafe.GatewayPhrase(tc.in)
			if !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
				t.Errorf("GatewayPhrase = %q, %v; want refused as not allowed", phrase, err)
			} else {
				outputs = append(outputs, err.Error())
			}
			outputs = append(outputs, e.audit.String(), e.logs.String())
			for what, trace := range traces {
				for _, out := range outputs {
					if strings.Contains(out, trace) {
						t.Errorf("%s (%s) appears in %s", what, trace, out)
					}
				}
			}
		})
	}
}

// TestGatewayWriteSecretParamNoGrant: at the grant level, a write with a
// secret parameter makes no grant: the refusal comes before approval, so
// no grant file in the grant directory holds the plan, the phrase or the
// arguments digest of the secret. Before, a pending grant was written
// with the unkeyed digests in it.
func TestGatewayWriteSecretParamNoGrant(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := grant.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := gatewayEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Approvals[proxmoxsafe.ClassGatewayWrite] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelGrant}
		c.Approvers = []proxmoxsafe.Approver{store}
	})
	tc := secretWrites[0]
	_, err = e.client.APIRequest(t.Context(), tc.in)
	var gre *grant.RequiredError
	if errors.As(err, &gre) || !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
		t.Fatalf("err = %v, want refused as not allowed, without a grant", err)
	}
	if grants, err := store.List(); err != nil || len(grants) != 0 {
		t.Errorf("grants = %+v, %v; want none", grants, err)
	}
	traces := secretTraces(t, tc.in, tc.secret)
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		for what, trace := range traces {
			if strings.Contains(string(raw), trace) {
				t.Errorf("%s (%s) is in %s", what, trace, path)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.requests(); len(got) != 0 {
		t.Errorf("requests = %v, want none", reqLines(got))
	}
}

// TestGatewayWritePlainParamsStillApproved: the rule refuses what the
// gateway would hide, not what merely resembles it: a description that
// names a key and a token without quoting one is shown in full in the
// plan and sent once approved.
func TestGatewayWritePlainParamsStillApproved(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	const desc = "before rotating the API key and the token"
	acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
	in := post(gatewayGuestPath, map[string]string{"action": "ACCEPT", "comment": desc})
	plan := in
	plan.Plan = true
	res, err := e.client.APIRequest(t.Context(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.Params["comment"] != desc {
		t.Errorf("plan params = %v, want the comment in full", res.Plan.Params)
	}
	in.Approval = res.Plan.Approval
	if _, err := e.client.APIRequest(t.Context(), in); err != nil {
		t.Fatalf("approved write: %v", err)
	}
	if got := e.fake.MutatingRequests(); len(got) != 1 || reqLine(got[0]) != "POST "+gatewayGuestPath || got[0].Form.Get("comment") != desc {
		t.Errorf("mutating requests = %+v, want the one write with the comment", got)
	}
}

// TestGatewayWriteSecretInPath: a path segment holding what the gateway
// refuses in a parameter value (a Proxmox ticket, "password=…",
// "api_token=…") is refused the same way: before, the secret stood in
// full in the phrase, the plan and the audit records, since the path is
// shown and recorded as it is. The refusal names no segment; nothing is
// sent; neither the secret nor the path reaches the error, the audit log,
// the logs or GatewayPhrase.
func TestGatewayWriteSecretInPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, secret string }{
		{"/cluster/ha/groups/password=dragon", "dragon"},
		{"/pools/PVE:root@pam:6A1B2C3D::c2ln", "6A1B2C3D::c2ln"},
		{"/cluster/ha/groups/api_token=s3cr3t/x", "s3cr3t"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			e := gatewayEnv(t, nil)
			in := proxmoxsafe.APIRequestInput{Method: "DELETE", Path: tc.path}
			planOnly := in
			planOnly.Plan = true
			var outputs []string
			for _, in := range []proxmoxsafe.APIRequestInput{in, planOnly} {
				res, err := e.client.APIRequest(t.Context(), in)
				if !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "path") || !strings.Contains(err.Error(), "no action was taken") {
					t.Fatalf("plan %v: result %+v, err = %v, want refused as not allowed, naming the path", in.Plan, res, err)
				}
				outputs = append(outputs, err.Error())
			}
			if phrase, err := proxmoxsafe.GatewayPhrase(in); !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
				t.Errorf("GatewayPhrase = %q, %v; want refused as not allowed", phrase, err)
			} else {
				outputs = append(outputs, err.Error())
			}
			if got := e.requests(); len(got) != 0 {
				t.Errorf("requests = %v, want none", reqLines(got))
			}
			// A read of the same path is refused the same way: its path
			// would stand in the log line.
			if res, err := e.client.APIGet(t.Context(), proxmoxsafe.APIGetInput{Path: tc.path}); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("api_get: result %+v, err = %v, want refused as not allowed", res, err)
			} else {
				outputs = append(outputs, err.Error())
			}
			if got := e.requests(); len(got) != 0 {
				t.Errorf("requests = %v, want none", reqLines(got))
			}
			outputs = append(outputs, e.audit.String(), e.logs.String())
			for _, out := range outputs {
				if strings.Contains(out, tc.secret) {
					t.Errorf("the secret %q appears in %s", tc.secret, out)
				}
			}
		})
	}
}

// TestGatewayWriteLookalikesNotSecret: the secret names match whole
// segments, not substrings, and the ticket expression needs a ticket's
// shape: names and values that merely contain "pass", "pwd", "key" or
// "PVE" are shown in full in the plan and sent once approved (a
// description is a real snapshot parameter; the look-alike names are
// checked up to the plan, since Proxmox would refuse them as unknown).
func TestGatewayWriteLookalikesNotSecret(t *testing.T) {
	t.Parallel()
	e := gatewayEnv(t, nil)
	for _, name := range []string{"bypass", "passthrough", "passive", "compass", "pwdx", "keyboard", "keephugepages", "public-key", "ssh-public-keys"} {
		in := post("/cluster/ha/groups", map[string]string{"group": "g1", name: "1"})
		in.Plan = true
		res, err := e.client.APIRequest(t.Context(), in)
		if err != nil {
			t.Errorf("parameter %s: %v, want a plan", name, err)
			continue
		}
		if res.Plan.Params[name] != "1" {
			t.Errorf("parameter %s: plan params = %v, want it shown", name, res.Plan.Params)
		}
	}
	acceptGatewayWrite(e, "POST", gatewayGuestPath, "null")
	for i, desc := range []string{
		"bypass=1 passthrough: on, passive: yes",
		"compass: north; pwdx=2",
		"sort key: name",
		"upgraded to PVE:8.4 at 6A1B2C3D",
		"PVEAuthCookie is set at login",
	} {
		in := post(gatewayGuestPath, map[string]string{"pos": strconv.Itoa(i), "comment": desc})
		plan := in
		plan.Plan = true
		res, err := e.client.APIRequest(t.Context(), plan)
		if err != nil {
			t.Errorf("description %q: %v, want a plan", desc, err)
			continue
		}
		if res.Plan.Params["comment"] != desc {
			t.Errorf("description %q: plan params = %v, want it in full", desc, res.Plan.Params)
		}
		in.Approval = res.Plan.Approval
		before := len(e.fake.MutatingRequests())
		if _, err := e.client.APIRequest(t.Context(), in); err != nil {
			t.Errorf("description %q: approved write: %v", desc, err)
		}
		if got := e.fake.MutatingRequests(); len(got) != before+1 || got[len(got)-1].Form.Get("comment") != desc {
			t.Errorf("description %q: mutating requests = %+v, want it sent once", desc, got[before:])
		}
	}
}
