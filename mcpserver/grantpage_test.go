package mcpserver

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

const testPageURL = "https://ops.example/approve/"

// TestGrantRefusalPointsToApprovalPage: with an approval page, a grant
// refusal names the grant's page; a client that declared URL elicitation
// gets a URL elicitation (-32042) to it instead. Neither sends anything
// mutating; once the operator approves, the same call runs once.
func TestGrantRefusalPointsToApprovalPage(t *testing.T) {
	t.Parallel()
	for _, pv := range []string{"", "2025-11-25"} {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			fake := proxmoxtest.NewServer(nil)
			t.Cleanup(fake.Close)
			store, err := grant.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			pol := defaultPolicy()
			pol.Approvals = map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}}
			client, err := proxmoxsafe.New(proxmoxsafe.Config{
				URL: fake.URL, TokenID: proxmoxtest.DefaultTokenID, TokenSecret: proxmoxtest.DefaultTokenSecret,
				Fingerprint: fake.Fingerprint(), Policy: pol, Audit: newMemAudit(),
				Approvers: []proxmoxsafe.Approver{store}, Logger: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			f := &elicitFixture{fake: fake, server: New(client, &Options{ApprovalPageURL: testPageURL})}
			// A fresh params value per call: go-sdk stores the client's
			// capabilities in the params' _meta on the newest protocol.
			params := func() *mcp.CallToolParams { return &mcp.CallToolParams{Name: ToolGuestPower, Arguments: shutdown101} }

			plain := f.connectWith(t, pv, nil)
			res, err := plain.CallTool(t.Context(), params())
			if err != nil {
				t.Fatal(err)
			}
			got := wantError(t, res, "no action was taken", testPageURL+"grant/", "proxmox-safe-mcp approve")
			grants, _ := store.List()
			if len(grants) != 1 || !strings.Contains(got, testPageURL+"grant/"+grants[0].Code) {
				t.Fatalf("grants %+v; refusal %s", grants, got)
			}
			code := grants[0].Code
			// The error object says what a program needs to have the
			// grant approved, and no phrase: the grant level refuses one.
			detail, _ := res.Meta[ErrorMetaKey].(map[string]any)
			g, _ := detail["grant"].(map[string]any)
			if g["code"] != code || g["expires"] != grants[0].Expires.UTC().Format(time.RFC3339) ||
				g["command"] != "proxmox-safe-mcp approve "+code || g["approval_url"] != testPageURL+"grant/"+code {
				t.Errorf("error object's grant %v", detail["grant"])
			}
			if strings.Contains(got, "APPROVE ") || detail["approval_phrase"] != nil {
				t.Errorf("a grant refusal shows a phrase the grant level refuses:\n%s", got)
			}

			urlCapable := f.connectWith(t, pv, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}},
			}})
			_, err = urlCapable.CallTool(t.Context(), params())
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeURLElicitationRequired {
				t.Fatalf("URL-capable client: %v, want a -32042 URL elicitation", err)
			}
			var data struct {
				Elicitations []mcp.ElicitParams `json:"elicitations"`
			}
			if err := json.Unmarshal(rpcErr.Data, &data); err != nil || len(data.Elicitations) != 1 {
				t.Fatalf("elicitation data %s: %v", rpcErr.Data, err)
			}
			e := data.Elicitations[0]
			if e.Mode != "url" || e.URL != testPageURL+"grant/"+code || e.ElicitationID == "" ||
				!strings.Contains(e.Message, "shutdown on pve1/qemu/101; cluster: "+client.Cluster().String()+";") || !strings.Contains(e.Message, "No action was taken") {
				t.Errorf("elicitation %+v", e)
			}
			if n := len(fake.MutatingRequests()); n != 0 {
				t.Fatalf("%d mutating requests before approval", n)
			}
			if grants, _ := store.List(); len(grants) != 1 {
				t.Errorf("the URL-capable client's call made another grant: %d", len(grants))
			}

			if _, err := store.Decide(code, true, "approval-page:alice"); err != nil {
				t.Fatal(err)
			}
			res, err = urlCapable.CallTool(t.Context(), params())
			if err != nil || res.IsError {
				t.Fatalf("approved retry: %v %s", err, mustJSON(t, res))
			}
			if n := len(fake.MutatingRequests()); n != 1 {
				t.Errorf("%d mutating requests after approval, want 1", n)
			}
		})
	}
}

// TestApprovalPageURLChecked: a malformed page URL is a programming error.
func TestApprovalPageURLChecked(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"/approve/", "ftp://x/approve/", "https://x/approve", "https://u:p@x/approve/", "https://x/approve/?a=1"} {
		if checkApprovalPageURL(u) == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if err := checkApprovalPageURL(testPageURL); err != nil {
		t.Error(err)
	}
}
