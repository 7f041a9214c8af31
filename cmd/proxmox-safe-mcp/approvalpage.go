package main

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// approvalPageConfig is the operator's approval page (package approvalweb),
// served in HTTP mode on the MCP listener under /approve/ when an operator
// secret is configured.
type approvalPageConfig struct {
	TokenFile string // PROXMOX_SAFE_OPERATOR_TOKEN_FILE: turns the page on
	Operator  string // PROXMOX_SAFE_OPERATOR_NAME; "": approvalweb.DefaultOperator
	URL       string // PROXMOX_SAFE_APPROVAL_URL; "": http://BOUND/approve/ on loopback
	secret    secret // read from TokenFile by checkApprovalPage
}

const (
	settingOperatorTokenFile = "PROXMOX_SAFE_OPERATOR_TOKEN_FILE (--operator-token-file)"
	settingApprovalURL       = "PROXMOX_SAFE_APPROVAL_URL (--approval-url)"
)

// checkApprovalPage validates the page's settings and reads the operator
// secret, for serve. The secret must differ from the MCP bearer token
// (whoever holds that must not be able to approve) and from the Proxmox
// credentials.
func checkApprovalPage(c *config) error {
	p := &c.ApprovalPage
	if c.Command != cmdServe { // other commands ignore the page's settings, as they do MCP_*
		return nil
	}
	if p.TokenFile == "" {
		if p.URL != "" || p.Operator != "" {
			return cfgErr("PROXMOX_SAFE_APPROVAL_URL and PROXMOX_SAFE_OPERATOR_NAME configure the approval page, which only %s turns on", settingOperatorTokenFile)
		}
		return nil
	}
	if c.HTTP.Addr == "" {
		return cfgErr("%s: the approval page is served in HTTP mode only (MCP_TRANSPORT=streamable-http or sse); with stdio, the operator approves with proxmox-safe-mcp approve CODE", settingOperatorTokenFile)
	}
	tok, err := c.readSecretFile(settingOperatorTokenFile, p.TokenFile) // keyfile.go
	if err != nil {
		return cfgErr("%s: %v", settingOperatorTokenFile, err)
	}
	switch {
	case len(tok) < approvalweb.MinSecretLength:
		return cfgErr("%s: the operator secret is shorter than %d characters (e.g. openssl rand -hex 32)", settingOperatorTokenFile, approvalweb.MinSecretLength)
	case tok == c.HTTP.Token.reveal():
		return cfgErr("%s: the operator secret must differ from the MCP bearer token: whoever holds the MCP token must not be able to approve", settingOperatorTokenFile)
	case tok == c.TokenSecret.reveal() || tok == c.Password.reveal():
		return cfgErr("%s: the operator secret must differ from the Proxmox token secret and password", settingOperatorTokenFile)
	}
	p.secret = secret{tok}
	if p.URL == "" && !c.HTTP.loopback {
		return cfgErr("%s: set %s, the URL at which the operator reaches the page (e.g. https://mcp.example.com/approve/), when not serving on loopback", settingOperatorTokenFile, settingApprovalURL)
	}
	return nil
}

// setApprovalURL takes PROXMOX_SAFE_APPROVAL_URL: where the operator opens
// the page. Its path must be /approve/ itself: the page's links, form
// actions and cookie path are /approve/…, which a proxy that moves the page
// under a prefix would break (the cookie would not even be sent).
func setApprovalURL(c *config, v string) error {
	v = strings.TrimSpace(v)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		u.Path != approvalweb.DefaultPath {
		return fmt.Errorf("must be an absolute http(s) URL whose path is %s, without credentials, query or fragment, e.g. https://mcp.example.com%s (got %q)", approvalweb.DefaultPath, approvalweb.DefaultPath, v)
	}
	c.ApprovalPage.URL = v
	return nil
}

// approvalPage builds the page for serveHTTP and returns it with its URL,
// or nil when it is off. bound is the address the listener got (the
// default URL names its port). The page decides the grants of the
// server's grant store, so a page without a class that uses the grant
// level is a configuration mistake.
func approvalPage(c *config, bound string, log *slog.Logger) (*approvalweb.Handler, string, error) {
	p := c.ApprovalPage
	if p.secret.empty() {
		return nil, "", nil
	}
	if p.URL == "" { // loopback only (checkApprovalPage)
		p.URL = "http://" + bound + approvalweb.DefaultPath
	}
	if !usesLevel(c, c.classes(), proxmoxsafe.LevelGrant) { // approvals.go: set or default levels
		return nil, "", cfgErr("%s: the approval page decides grants, but no mutation class uses the grant level: add it to PROXMOX_SAFE_APPROVALS (e.g. power=elicit,grant)", settingOperatorTokenFile)
	}
	store, err := grantStore(c) // approve.go
	if err != nil {
		return nil, "", cfgErr("%s: %v", settingOperatorTokenFile, err)
	}
	u, _ := url.Parse(p.URL) // checked by setApprovalURL or built by checkApprovalPage
	h, err := approvalweb.New(store, &approvalweb.Options{
		Secret:         p.secret.reveal(),
		OtherSecrets:   []string{c.HTTP.Token.reveal(), c.TokenSecret.reveal(), c.Password.reveal()},
		Operator:       p.Operator,
		SecureCookie:   u.Scheme == "https",
		TrustedOrigins: []string{u.Scheme + "://" + u.Host},
		Logger:         log,
	})
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "approvalweb: ")
		if strings.HasPrefix(msg, "operator name") {
			return nil, "", cfgErr("PROXMOX_SAFE_OPERATOR_NAME (--operator-name): %s", msg)
		}
		return nil, "", cfgErr("%s: %s", settingOperatorTokenFile, msg)
	}
	return h, p.URL, nil
}
