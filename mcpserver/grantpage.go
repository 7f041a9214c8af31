package mcpserver

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// checkApprovalPageURL validates Options.ApprovalPageURL.
func checkApprovalPageURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil ||
		p.RawQuery != "" || p.Fragment != "" || !strings.HasSuffix(p.Path, "/") {
		return fmt.Errorf("mcpserver: ApprovalPageURL %q must be an absolute http(s) URL ending in / without credentials, query or fragment", u)
	}
	return nil
}

// grantPageURL is the approval page of one grant.
func grantPageURL(page, code string) string { return page + "grant/" + url.PathEscape(code) }

// pageRefusal is a grant refusal that also names the approval page.
type pageRefusal struct {
	err error
	url string
}

func (e *pageRefusal) Error() string {
	return e.err.Error() + ". The operator can also decide it on the approval page (operator login required): " + e.url
}

func (e *pageRefusal) Unwrap() error { return e.err }

// pointToApprovalPage handles a grant refusal when the operator serves an
// approval page (Options.ApprovalPageURL). A client that declared URL-mode
// elicitation gets the URL elicitation error of MCP 2025-11-25 (-32042)
// naming the grant's page, so it can show the person the page to open
// and repeat the call afterwards; any other client gets the refusal text
// with the page's URL added. The URL holds only the grant's code, which
// the refusal shows anyway: the page needs the operator's own login. It
// returns the protocol error to send, or the (possibly wrapped) error.
func (a *adapter) pointToApprovalPage(req *mcp.CallToolRequest, err error) (protocolErr, out error) {
	var gr *grant.RequiredError
	if a.approvalPage == "" || !errors.As(err, &gr) {
		return nil, err
	}
	page := grantPageURL(a.approvalPage, gr.Grant.Code)
	if req != nil && canElicitURL(req.ClientCapabilities()) {
		g := gr.Grant
		return mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
			Mode:          "url",
			URL:           page,
			ElicitationID: "grant-" + g.Code,
			Message: fmt.Sprintf("An operator must approve grant %s on the approval page (operator login required) before %s, then repeat the call unchanged. "+
				"Plan: %s on %s; cluster: %s; approving will %s; current state: %s. No action was taken.",
				g.Code, g.Expires.Format("15:04:05 MST"), g.Action, g.Target, g.Cluster, clean(g.Effect, 4096), g.State),
		}}), nil
	}
	return nil, &pageRefusal{err: err, url: page}
}

// canElicitURL reports whether the client declared URL-mode elicitation.
func canElicitURL(c *mcp.ClientCapabilities) bool {
	return c != nil && c.Elicitation != nil && c.Elicitation.URL != nil
}
