package settings

import (
	"os"
	"path/filepath"
	"testing"
)

// TestApprovalPageConfig: the page's startup rules, without starting
// anything.
func TestApprovalPageConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opFile := write("operator", operatorSecret+"\n")
	sameAsMCP := write("operator-mcp", httpToken+"\n")
	short := write("operator-short", "short\n")
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" = OK
	}{
		{"page on loopback", []string{"--demo", "--http", "8000", "--operator-token-file", opFile}, nil, ""},
		{"page with a URL", []string{"--demo", "--http", "0.0.0.0:8000", "--operator-token-file", opFile, "--approval-url", "https://mcp.example.com/approve/"},
			map[string]string{"MCP_AUTH_TOKEN": httpToken}, ""},
		{"page off loopback without a URL", []string{"--demo", "--http", "0.0.0.0:8000", "--operator-token-file", opFile},
			map[string]string{"MCP_AUTH_TOKEN": httpToken}, "set PROXMOX_SAFE_APPROVAL_URL"},
		{"operator secret is the MCP token", []string{"--demo", "--http", "8000", "--operator-token-file", sameAsMCP},
			map[string]string{"MCP_AUTH_TOKEN": httpToken}, "must differ from the MCP bearer token"},
		{"operator secret is the Proxmox secret", []string{"--http", "8000", "--operator-token-file", opFile},
			map[string]string{"PVE_URL": "https://pve.example.com:8006", "PVE_API_TOKEN_ID": "a@pve!mcp", "PVE_API_TOKEN_SECRET": operatorSecret, "MCP_AUTH_TOKEN": httpToken, "PROXMOX_SAFE_READ_ONLY": "true"},
			"must differ from the Proxmox token secret"},
		{"short operator secret", []string{"--demo", "--http", "8000", "--operator-token-file", short}, nil, "shorter than 16"},
		{"missing operator file", []string{"--demo", "--http", "8000", "--operator-token-file", filepath.Join(dir, "nope")}, nil, "PROXMOX_SAFE_OPERATOR_TOKEN_FILE"},
		{"page with stdio", []string{"--demo", "--operator-token-file", opFile}, nil, "HTTP mode only"},
		{"URL without the page", []string{"--demo", "--http", "8000", "--approval-url", "https://mcp.example.com/approve/"}, nil, "only PROXMOX_SAFE_OPERATOR_TOKEN_FILE"},
		{"URL with another path", []string{"--demo", "--http", "8000", "--operator-token-file", opFile, "--approval-url", "https://mcp.example.com/ops/"}, nil, "whose path is /approve/"},
		{"URL under a prefix", []string{"--demo", "--http", "8000", "--operator-token-file", opFile, "--approval-url", "https://mcp.example.com/ops/approve/"}, nil, "whose path is /approve/"},
		{"URL with a query", []string{"--demo", "--http", "8000", "--operator-token-file", opFile, "--approval-url", "https://mcp.example.com/approve/?x=1"}, nil, "whose path is /approve/"},
		{"tools ignores the page", []string{"--demo", "tools"}, map[string]string{"PROXMOX_SAFE_OPERATOR_TOKEN_FILE": opFile}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc.args, tc.env, tc.want, httpToken, operatorSecret) })
	}
}
