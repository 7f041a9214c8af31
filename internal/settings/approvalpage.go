package settings

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// ApprovalPageConfig is the operator's approval page (package approvalweb),
// served in HTTP mode on the MCP listener under /approve/ when an operator
// secret is configured.
type ApprovalPageConfig struct {
	TokenFile string // PROXMOX_SAFE_OPERATOR_TOKEN_FILE: turns the page on
	Operator  string // PROXMOX_SAFE_OPERATOR_NAME; "": approvalweb.DefaultOperator
	URL       string // PROXMOX_SAFE_APPROVAL_URL; "": http://BOUND/approve/ on loopback
	Secret    Secret // read from TokenFile by checkApprovalPage
}

const (
	SettingOperatorTokenFile = "PROXMOX_SAFE_OPERATOR_TOKEN_FILE (--operator-token-file)"
	settingApprovalURL       = "PROXMOX_SAFE_APPROVAL_URL (--approval-url)"
)

// checkApprovalPage validates the page's settings and reads the operator
// secret, for serve. The secret must differ from the MCP bearer token
// (whoever holds that must not be able to approve) and from the Proxmox
// credentials.
func checkApprovalPage(c *Config) error {
	p := &c.ApprovalPage
	if c.Command != CmdServe { // other commands ignore the page's settings, as they do MCP_*
		return nil
	}
	if p.TokenFile == "" {
		if p.URL != "" || p.Operator != "" {
			return Errorf("PROXMOX_SAFE_APPROVAL_URL and PROXMOX_SAFE_OPERATOR_NAME configure the approval page, which only %s turns on", SettingOperatorTokenFile)
		}
		return nil
	}
	if c.HTTP.Addr == "" {
		return Errorf("%s: the approval page is served in HTTP mode only (MCP_TRANSPORT=streamable-http or sse); with stdio, the operator approves with proxmox-safe-mcp approve CODE", SettingOperatorTokenFile)
	}
	tok, err := c.readSecretFile(SettingOperatorTokenFile, p.TokenFile) // secretfile.go
	if err != nil {
		return Errorf("%s: %v", SettingOperatorTokenFile, err)
	}
	switch {
	case len(tok) < approvalweb.MinSecretLength:
		return Errorf("%s: the operator secret is shorter than %d characters (e.g. openssl rand -hex 32)", SettingOperatorTokenFile, approvalweb.MinSecretLength)
	case tok == c.HTTP.Token.Reveal():
		return Errorf("%s: the operator secret must differ from the MCP bearer token: whoever holds the MCP token must not be able to approve", SettingOperatorTokenFile)
	case tok == c.TokenSecret.Reveal() || tok == c.Password.Reveal():
		return Errorf("%s: the operator secret must differ from the Proxmox token secret and password", SettingOperatorTokenFile)
	}
	p.Secret = Secret{tok}
	if p.URL == "" && !c.HTTP.Loopback {
		return Errorf("%s: set %s, the URL at which the operator reaches the page (e.g. https://mcp.example.com/approve/), when not serving on loopback", SettingOperatorTokenFile, settingApprovalURL)
	}
	return nil
}

// setApprovalURL takes PROXMOX_SAFE_APPROVAL_URL: where the operator opens
// the page. Its path must be /approve/ itself: the page's links, form
// actions and cookie path are /approve/…, which a proxy that moves the page
// under a prefix would break (the cookie would not even be sent).
func setApprovalURL(c *Config, v string) error {
	v = strings.TrimSpace(v)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		u.Path != approvalweb.DefaultPath {
		return fmt.Errorf("must be an absolute http(s) URL whose path is %s, without credentials, query or fragment, e.g. https://mcp.example.com%s (got %s)", approvalweb.DefaultPath, approvalweb.DefaultPath, sanitize.Quote(v))
	}
	c.ApprovalPage.URL = v
	return nil
}

// approvalPage builds the page for serveHTTP and returns it with its URL,
