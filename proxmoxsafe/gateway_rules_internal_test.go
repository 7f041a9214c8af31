package proxmoxsafe

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/routes"
)

// TestGatewayRules: the library's form of the gateway's path rules and
// deny list (internal/routes): a bad path is a ValidationError on the path
// field with the rule's problem, a denied request a not-allowed refusal
// naming the rule, and the documented list is the table.
func TestGatewayRules(t *testing.T) {
	t.Parallel()
	segs, err := parseGatewayPath("/cluster/resources")
	if err != nil || gatewayCanonical(segs) != "/cluster/resources" {
		t.Errorf("parseGatewayPath = %q, %v", segs, err)
	}
	_, err = parseGatewayPath("/x?y")
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidInput) || len(ve.Fields) != 1 || ve.Fields[0].Field != "path" || !strings.Contains(ve.Fields[0].Problem, "query string") {
		t.Errorf("err = %v, want a ValidationError on path", err)
	}
	rule := deniedBy("PUT", []string{"access", "acl"})
	if rule == nil {
		t.Fatal("PUT /access/acl is not denied")
	}
	err = deniedRefusal("PUT", "/access/acl", rule)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "deny list (/access/**: ") || !strings.Contains(err.Error(), "no request was sent") {
		t.Errorf("refusal = %v", err)
	}
	if deniedBy("GET", []string{"access", "acl"}) != nil {
		t.Error("GET /access/acl is denied")
	}
	if got := DeniedGatewayRoutes(); !slices.Equal(got, routes.DenyLines()) || len(got) != len(routes.DenyRules()) {
		t.Errorf("DeniedGatewayRoutes has %d lines, the table %d rules", len(got), len(routes.DenyRules()))
	}
	if MaxGatewayPathLen != 256 || MaxGatewaySegments != 12 {
		t.Errorf("bounds %d, %d", MaxGatewayPathLen, MaxGatewaySegments)
	}
}
