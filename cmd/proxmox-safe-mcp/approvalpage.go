package main

import (
	"log/slog"
	"net/url"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// approvalPage builds the page for serveHTTP and returns it with its URL,
// or nil when it is off. bound is the address the listener got (the
// default URL names its port). The page decides the grants of the
// server's grant store, so a page without a class that uses the grant
// level is a configuration mistake.
func approvalPage(c *settings.Config, bound string, log *slog.Logger) (*approvalweb.Handler, string, error) {
	p := c.ApprovalPage
	if p.Secret.Empty() {
		return nil, "", nil
	}
	if p.URL == "" { // loopback only (checkApprovalPage)
		p.URL = "http://" + bound + approvalweb.DefaultPath
	}
	if !c.UsesLevel(c.Classes(), proxmoxsafe.LevelGrant) { // approvals.go: set or default levels
		return nil, "", settings.Errorf("%s: the approval page decides grants, but no mutation class uses the grant level: add it to PROXMOX_SAFE_APPROVALS (e.g. power=elicit,grant)", settings.SettingOperatorTokenFile)
	}
	store, err := grantStore(c) // approve.go
	if err != nil {
		return nil, "", settings.Errorf("%s: %v", settings.SettingOperatorTokenFile, err)
	}
	u, _ := url.Parse(p.URL) // checked by setApprovalURL or built by checkApprovalPage
	h, err := approvalweb.New(store, &approvalweb.Options{
		Secret:         p.Secret.Reveal(),
		OtherSecrets:   []string{c.HTTP.Token.Reveal(), c.TokenSecret.Reveal(), c.Password.Reveal()},
		Operator:       p.Operator,
		SecureCookie:   u.Scheme == "https",
		TrustedOrigins: []string{u.Scheme + "://" + u.Host},
		Logger:         log,
	})
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "approvalweb: ")
		if strings.HasPrefix(msg, "operator name") {
			return nil, "", settings.Errorf("PROXMOX_SAFE_OPERATOR_NAME (--operator-name): %s", msg)
		}
		return nil, "", settings.Errorf("%s: %s", settings.SettingOperatorTokenFile, msg)
	}
	return h, p.URL, nil
}
