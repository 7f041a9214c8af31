package approvalweb

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// grantView is a grant as the page shows it.
type grantView struct {
	grant.Grant
	Risk     string
	Expired  bool
	Pending  bool // pending and not expired: it can be decided
	ParamStr string
	// TargetText names the target: the guest (node/type/vmid[/snapshot]),
	// or for a request that names no guest, its path.
	TargetText string
	// Confirm is what the operator types to approve, and ConfirmWhat
	// names it ([proxmoxsafe.ConfirmWord]); both are "" for a grant that
	// names nothing to type, which the page does not approve.
	Confirm, ConfirmWhat string
	// ClusterText names the cluster the grant is for, and RequestText the
	// one request it sends with its parameters: with the rest they are
	// exactly what the grant binds (grant.Grant.Request).
	ClusterText, RequestText string
	// Unbound is set for a grant whose fields do not give its binding
	// (an earlier version's, or edited): it cannot be approved.
	Unbound bool
}

func (h *Handler) view(g grant.Grant, now time.Time) grantView {
	expired := now.After(g.Expires)
	word, what := proxmoxsafe.ConfirmWord(g.Target, g.Plan)
	cluster := g.Cluster.String()
	if cluster == "" {
		cluster = "(not recorded)"
	}
	return grantView{
		Grant: g, Risk: g.Risk, Expired: expired,
		Pending: g.Status == grant.Pending && !expired, ParamStr: strings.Join(g.Params, " "),
		TargetText: g.TargetLabel(), Confirm: word, ConfirmWhat: what,
		ClusterText: cluster, RequestText: g.Request().Request(), Unbound: !g.Shows(),
	}
}

// maxRecent is how many decided or expired grants the list shows below
// the pending ones.
const maxRecent = 10

// serveIndex shows the pending grants, or the login form.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	s := h.sessionFrom(r)
	if s == nil {
		h.render(w, http.StatusOK, "login", pageData{Title: "Log in"})
		return
	}
	grants, err := h.store.List()
	if err != nil {
		h.log.Error("approval page: grant store", slog.Any("error", err))
		h.fail(w, r, http.StatusInternalServerError, "the grant store could not be read", s)
		return
	}
	now := h.now()
	d := pageData{Title: "Pending grants", Session: s}
	for _, g := range grants { // newest first
		v := h.view(g, now)
		switch {
		case v.Pending:
			d.Pending = append(d.Pending, v)
		case len(d.Recent) < maxRecent:
			d.Recent = append(d.Recent, v)
		}
	}
	h.render(w, http.StatusOK, "list", d)
}

// serveGrant shows one grant's plan, with the decision forms while it is
// pending.
func (h *Handler) serveGrant(w http.ResponseWriter, r *http.Request, code string) {
	s := h.sessionFrom(r)
	if s == nil {
		h.render(w, http.StatusUnauthorized, "login", pageData{Title: "Log in", Message: "Log in to see this grant."})
		return
	}
	g, err := h.store.Get(code)
	if err != nil {
		h.grantError(w, r, err, s)
		return
	}
	v := h.view(g, h.now())
	h.render(w, http.StatusOK, "grant", pageData{Title: "Grant " + g.Code, Session: s, Grant: &v})
}

// serveDecide approves or denies a pending grant: logged in, CSRF token,
// and for an approval the guest's VMID (or, for a request that names no
// guest, its method and path) typed in.
func (h *Handler) serveDecide(w http.ResponseWriter, r *http.Request, code string) {
	s := h.sessionFrom(r)
	if s == nil {
		h.fail(w, r, http.StatusUnauthorized, "not logged in (or the login expired); nothing was changed", nil)
		return
	}
	if !checkCSRF(r, s) {
		h.fail(w, r, http.StatusForbidden, "the form's CSRF token is missing or wrong; nothing was changed", s)
		return
	}
	var approve bool
	switch r.PostFormValue("decision") {
	case "approve":
		approve = true
	case "deny":
	default:
		h.fail(w, r, http.StatusBadRequest, "the decision must be approve or deny; nothing was changed", s)
		return
	}
	g, err := h.store.Get(code)
	if err != nil {
		h.grantError(w, r, err, s)
		return
	}
	if approve && !g.Shows() {
		h.fail(w, r, http.StatusUnprocessableEntity, "this grant does not bind what it shows (an earlier version wrote it, or it was edited), so the page cannot approve it; nothing was changed", s)
		return
	}
	if word, what := proxmoxsafe.ConfirmWord(g.Target, g.Plan); approve && word == "" {
		h.fail(w, r, http.StatusUnprocessableEntity, "this grant names no guest and no request to type, so the page cannot approve it; nothing was changed", s)
		return
	} else if approve && !proxmoxsafe.ConfirmMatches(r.PostFormValue("confirm"), word) {
		h.fail(w, r, http.StatusUnprocessableEntity, "the typed "+what+" does not match the grant's; nothing was changed", s)
		return
	}
	if _, err := h.store.Decide(code, approve, h.operator); err != nil {
		h.fail(w, r, http.StatusConflict, err.Error(), s)
		return
	}
	decision := "denied"
	if approve {
		decision = "approved"
	}
	h.log.Info("approval page decision", slog.String("grant", g.Code), slog.String("decision", decision),
		slog.String("operator", h.operator), slog.String("cluster", g.Cluster.String()), slog.String("action", g.Action), slog.String("target", g.Target.String()))
	http.Redirect(w, r, h.path+"grant/"+g.Code, http.StatusSeeOther)
}

// grantError answers a failed grant lookup: 404 for an unknown or
// malformed code, 500 otherwise.
func (h *Handler) grantError(w http.ResponseWriter, r *http.Request, err error, s *session) {
	if errors.Is(err, grant.ErrNotFound) || strings.Contains(err.Error(), "is not a grant code") {
		h.fail(w, r, http.StatusNotFound, "no grant has this code", s)
		return
	}
	h.log.Error("approval page: grant store", slog.Any("error", err))
	h.fail(w, r, http.StatusInternalServerError, "the grant store could not be read", s)
}
