package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestElicitNothingToType: a request that names neither a guest nor a
// request line (no operation makes one) is never put to the person, whose
// typed word could then name nothing: the level refuses it, without a
// form.
func TestElicitNothingToType(t *testing.T) {
	t.Parallel()
	ap, err := NewElicitApprover(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolAPIRequest, Arguments: json.RawMessage(`{}`)}}
	ar := proxmoxsafe.ApprovalRequest{Action: "POST", Arguments: "digest", Effect: "send POST somewhere"}
	err = ap.ask(req, ar, "test")
	var ir *InputRequiredError
	if errors.As(err, &ir) || !errors.Is(err, proxmoxsafe.ErrApprovalRequired) || !strings.Contains(err.Error(), "no request for the person to type") {
		t.Fatalf("ask = %v, want a refusal without a form", err)
	}
	ar.Plan = &proxmoxsafe.Plan{Method: "POST", Path: "/cluster/ha/groups"}
	if err := ap.ask(req, ar, "test"); !errors.As(err, &ir) {
		t.Fatalf("ask with a plan = %v, want the form", err)
	}
}
