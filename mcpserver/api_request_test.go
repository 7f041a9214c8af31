package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// gatewayPolicy enables both gateway classes on pve1, gateway-write by
// the phrase.
func gatewayPolicy() *proxmoxsafe.Policy {
	return &proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
}

// TestAPIRequestTool: without approval the refusal names the exact phrase
// and nothing mutating is sent; with it, the one write goes out, audited.
func TestAPIRequestTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, t.Context(), "", fixtureConfig{policy: gatewayPolicy()})
	// A guest's firewall rule, which no dedicated tool covers; the fake
	// models no firewall and answers it as Proxmox does a task.
	const path = "/nodes/pve1/qemu/100/firewall/rules"
	f.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: path, Body: []byte(`{"data":"UPID:pve1:00001234:00005678:6745A2B0:qmconfig:100:root@pam:"}`)})
	args := map[string]any{"method": "POST", "path": path, "params": map[string]any{"action": "ACCEPT"}}
	phrase, err := proxmoxsafe.GatewayPhrase(proxmoxsafe.APIRequestInput{Method: "POST", Path: path, Params: map[string]string{"action": "ACCEPT"}})
	if err != nil {
		t.Fatal(err)
	}
	res := f.call(t, t.Context(), ToolAPIRequest, args)
	if !res.IsError || !strings.Contains(text(t, res), phrase) || strings.Contains(text(t, res), "Current state") {
		t.Fatalf("without approval: %s, want a refusal naming %q", text(t, res), phrase)
	}
	if got := f.fake.MutatingRequests(); len(got) != 0 {
		t.Fatalf("mutating requests after the refusal: %+v", got)
	}
	res = f.call(t, t.Context(), ToolAPIRequest, with(args, "approval", phrase))
	if res.IsError {
		t.Fatalf("approved: %s", text(t, res))
	}
	var out proxmoxsafe.APIResult
	structured(t, res, &out)
	muts := f.fake.MutatingRequests()
	if len(muts) != 1 || muts[0].Path != path || muts[0].Form.Get("action") != "ACCEPT" || !strings.HasPrefix(out.UPID, "UPID:") {
		t.Errorf("mutating requests %+v, result %+v", muts, out)
	}
	recs := f.audit.records(t)
	if n := len(recs); n < 2 || recs[n-1].Event != proxmoxsafe.AuditSubmitted || recs[n-1].Path != path || recs[n-2].Event != proxmoxsafe.AuditApproved {
		t.Errorf("audit = %+v", recs)
	}
}

// TestAPIRequestElicit: with gateway-write approved by elicitation, the
// person types the guest's VMID, or the method and path of a request that
// names no guest (the fake answers that one 501, but it was sent); a
// wrong word sends nothing, the HTTP method alone included (every POST
// would share it).
func TestAPIRequestElicit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, confirm string
		sent          int
	}{
		{"/nodes/pve1/qemu/101/firewall/rules", "101", 1},
		{"/nodes/pve1/qemu/101/firewall/rules", "POST", 0},
		{"/cluster/ha/groups", "POST /cluster/ha/groups", 1},
		{"/cluster/ha/groups", " POST  /cluster/ha/groups ", 1},
		{"/cluster/ha/groups", "POST", 0},
		{"/cluster/ha/groups", "/cluster/ha/groups", 0},
		{"/cluster/ha/groups", "POST groups", 0},
		{"/cluster/ha/groups", "PUT /cluster/ha/groups", 0},
		{"/cluster/ha/groups", "101", 0},
	} {
		t.Run(tc.path+"/"+tc.confirm, func(t *testing.T) {
			t.Parallel()
			ef := gatewayElicitFixture(t)
			fake := ef.fake
			seen, titles := make(chan string, 4), make(chan string, 4)
			cs := ef.connectWith(t, "", &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				seen <- r.Params.Message
				raw, _ := json.Marshal(r.Params.RequestedSchema)
				titles <- string(raw)
				return accept(tc.confirm), nil
			}})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolAPIRequest,
				Arguments: map[string]any{"method": "POST", "path": tc.path, "params": map[string]any{"snapname": "el1"}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(fake.MutatingRequests()); got != tc.sent {
				t.Errorf("mutating requests = %d, want %d (result %v)", got, tc.sent, res.Content)
			}
			msg := <-seen
			if !strings.Contains(msg, "path="+tc.path) || !strings.Contains(msg, "snapname=el1") {
				t.Errorf("form message does not show the request:\n%s", msg)
			}
			want := "Type the VMID 101 to approve"
			if !strings.Contains(tc.path, "/qemu/101/") {
				want = "Type the request POST " + tc.path + " to approve"
			}
			if title := <-titles; !strings.Contains(title, want) {
				t.Errorf("form schema %s does not ask %q", title, want)
			}
		})
	}
}

// TestAPIRequestCoveredRefused: a write a dedicated tool covers is
// refused before any elicitation, naming the tool: with destroy and power
// at the grant level, a DELETE of a guest and a stop went out once the
// person answered the gateway's elicitation, skipping the destroy class's
// level and every precondition. No form is shown, nothing is sent.
func TestAPIRequestCoveredRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, path, tool string }{
		{"DELETE", "/nodes/pve1/qemu/101", ToolGuestDestroy},
		{"POST", "/nodes/pve1/qemu/100/status/stop", ToolGuestPower},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			ef := gatewayElicitFixture(t)
			var asked atomic.Int32
			cs := ef.connectWith(t, "", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				return accept("101"), nil
			}})
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolAPIRequest, Arguments: map[string]any{"method": tc.method, "path": tc.path}})
			if err != nil {
				t.Fatal(err)
			}
			msg := text(t, res)
			if !res.IsError || !strings.Contains(msg, "the tool: "+tc.tool) || !strings.Contains(msg, `"action_taken":"none"`) {
				t.Errorf("result: %s, want a refusal naming %s", msg, tc.tool)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("%d elicitations, want none", n)
			}
			if got := ef.fake.MutatingRequests(); len(got) != 0 {
				t.Errorf("mutating requests = %+v, want none", got)
			}
		})
	}
}

// gatewayElicitFixture is a server whose gateway-write class is approved
// by elicitation only, on a fresh fake.
func gatewayElicitFixture(t *testing.T) *elicitFixture {
	t.Helper()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := gatewayPolicy()
	pol.Approvals[proxmoxsafe.ClassGatewayWrite] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit}
	audit := newMemAudit()
	client, err := proxmoxsafe.New(proxmoxsafe.Config{
		URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: fake.Fingerprint(), Policy: *pol, Audit: audit,
		Approvers: []proxmoxsafe.Approver{ap}, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &elicitFixture{fake: fake, audit: audit, approver: ap, server: New(client, nil)}
}

// TestAPIRequestSecretParamNotElicited: a gateway write with a secret
// parameter (here a PowerDNS API key) is refused before the person is
// asked: no elicitation form (which showed the parameter digest), a tool
// error naming the parameter and saying nothing was done, zero upstream
// requests, and neither the value nor its unkeyed parameter digest in the
// result or the audit log. Before, the form asked the person to approve
// "key=[redacted]" and carried the digest.
func TestAPIRequestSecretParamNotElicited(t *testing.T) {
	t.Parallel()
	ef := gatewayElicitFixture(t)
	var asked atomic.Int32
	cs := ef.connectWith(t, "", answering(&asked, nil, func(int32) *mcp.ElicitResult { return accept("POST") }))
	params := map[string]string{"dns": "pdns", "type": "powerdns", "url": "https://dns.example/api", "key": "hunter2"}
	vals := url.Values{}
	for k, v := range params {
		vals.Set(k, v)
	}
	sum := sha256.Sum256([]byte(vals.Encode()))
	digest := hex.EncodeToString(sum[:8])
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolAPIRequest,
		Arguments: map[string]any{"method": "POST", "path": "/cluster/sdn/dns", "params": params}})
	if err != nil {
		t.Fatal(err)
	}
	out := text(t, res)
	if !res.IsError || !strings.Contains(out, "parameter key is never sent through the gateway") || !strings.Contains(out, "no action was taken") {
		t.Errorf("result = %s, want a refusal naming the parameter", out)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the person was asked %d times, want never", n)
	}
	if got := ef.fake.Requests(); len(got) != 0 {
		t.Errorf("upstream requests = %+v, want none", got)
	}
	raw, _ := json.Marshal(res)
	for _, s := range []string{string(raw), ef.audit.String()} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, digest) {
			t.Errorf("the secret or its digest %s leaked: %s", digest, s)
		}
	}
}
