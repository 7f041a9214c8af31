package approvalweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"sync"
	"time"
)

// style is the page's one stylesheet, inline; the Content-Security-Policy
// allows exactly it by hash (and no script at all). Values (table cells,
// the plan's definitions, code) keep their white space (pre-wrap): the
// approval binds the exact bytes, and HTML's default would show
// "a  b" as "a b" and drop a line break or an edge space.
const style = `body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1c1c1c;background:#f4f5f7}
header{background:#23303f;color:#fff;padding:.7em 1.2em;display:flex;justify-content:space-between;align-items:center}
header h1{font-size:1.1em;margin:0}header form{margin:0}
main{max-width:56em;margin:1.2em auto;padding:0 1em}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:.45em .6em;border-bottom:1px solid #dde1e6;vertical-align:top}
th{background:#eceff3;font-weight:600}
dl.plan{display:grid;grid-template-columns:9em 1fr;gap:.35em 1em;background:#fff;padding:1em;border:1px solid #dde1e6}
dl.plan dt{font-weight:600}dl.plan dd{margin:0}
code{font-family:ui-monospace,monospace;background:#eceff3;padding:0 .25em}
.status{font-weight:600}.pending{color:#8a5a00}.approved,.used{color:#1d6b2a}.denied,.expired{color:#a01d1d}
.decide{display:flex;gap:1.5em;margin-top:1em;flex-wrap:wrap}
.decide form{background:#fff;border:1px solid #dde1e6;padding:1em}
label{display:block;margin-bottom:.4em}input[type=text],input[type=password]{font:inherit;padding:.3em;width:14em}
input.wide{font-family:ui-monospace,monospace;width:32em;max-width:100%}
button{font:inherit;padding:.35em 1.1em;cursor:pointer}
button.approve{background:#1d6b2a;color:#fff;border:1px solid #14501f}
button.deny{background:#a01d1d;color:#fff;border:1px solid #7a1313}
.msg{background:#fff3cd;border:1px solid #e6cf7a;padding:.6em 1em}
.note{color:#555;font-size:.92em}
td,dl.plan dd,code{white-space:pre-wrap;overflow-wrap:anywhere}`

// csp is the Content-Security-Policy of every answer, made on first use
// (not at package initialization, which every start of the binary pays).
var csp = sync.OnceValue(func() string {
	sum := sha256.Sum256([]byte(style))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
})

// securityHeaders sets the headers every answer carries, errors included.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp())
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// pageData is what every template gets.
type pageData struct {
	Title   string
	Message string
	Base    string   // the page's path prefix
	Session *session // nil when logged out
	CSRF    string   // the session's CSRF token, for the forms
	Pending []grantView
	Recent  []grantView
	Grant   *grantView
}

// templates are parsed on first use, not at program start: every start
// of the binary links this package, few serve the page, and parsing at every start
// would cost every start.
var templates = sync.OnceValue(func() *template.Template { return parseTemplates() })

func parseTemplates() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") },
	}).Parse(`{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<meta name="referrer" content="no-referrer"><title>{{.Title}} · proxmox-safe-mcp approvals</title>
<style>` + style + `</style></head><body>
<header><h1>proxmox-safe-mcp · operator approvals</h1>{{if .Session}}<form method="post" action="{{.Base}}logout">
<input type="hidden" name="csrf" value="{{.CSRF}}"><button type="submit">Log out</button></form>{{end}}</header><main>
{{if .Message}}<p class="msg">{{.Message}}</p>{{end}}{{end}}

{{define "foot"}}</main></body></html>{{end}}

{{define "login"}}{{template "head" .}}
<h2>Log in</h2>
<form method="post" action="{{.Base}}login">
<label for="secret">Operator secret (not the MCP token)</label>
<input type="password" id="secret" name="secret" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button></form>
<p class="note">Grants are asked for by refused MCP calls. Approving one lets the same call, repeated unchanged, run once.</p>
{{template "foot" .}}{{end}}

{{define "error"}}{{template "head" .}}<p><a href="{{.Base}}">Back to the list</a></p>{{template "foot" .}}{{end}}

{{define "rows"}}<table><tr><th>Code</th><th>Cluster</th><th>Action</th><th>Target</th><th>Current state</th><th>Effect</th><th>Status</th><th>Expires</th></tr>
{{range .}}<tr><td><a href="grant/{{.Code}}"><code>{{.Code}}</code></a></td><td><code>{{.ClusterText}}</code></td><td>{{.Action}}{{if .ParamStr}} <code>{{.ParamStr}}</code>{{end}}</td>
<td><code>{{.TargetText}}</code></td><td>{{.State}}</td><td>{{.Effect}}</td>
<td class="status {{if .Expired}}expired{{else}}{{.Status}}{{end}}">{{.Status}}{{if .Expired}} (expired){{end}}</td>
<td>{{when .Expires}}</td></tr>{{end}}</table>{{end}}

{{define "list"}}{{template "head" .}}
<h2>Pending grants</h2>
{{if .Pending}}{{template "rows" .Pending}}{{else}}<p>No grant is waiting for a decision.</p>{{end}}
{{if .Recent}}<h2>Recent</h2>{{template "rows" .Recent}}{{end}}
<p class="note">Reload the page to see new grants.</p>
{{template "foot" .}}{{end}}

{{define "grant"}}{{template "head" .}}{{with .Grant}}
<h2>Grant <code>{{.Code}}</code></h2>
<dl class="plan">
<dt>Status</dt><dd class="status {{if .Expired}}expired{{else}}{{.Status}}{{end}}">{{.Status}}{{if .Expired}} (expired){{end}}{{if .Operator}} · by {{.Operator}} at {{when .Decided}}{{end}}{{if not .Used.IsZero}} · used at {{when .Used}}{{end}}</dd>
<dt>Cluster</dt><dd><code>{{.ClusterText}}</code></dd>
<dt>Action</dt><dd>{{.Action}}</dd>
<dt>Target</dt><dd><code>{{.TargetText}}</code></dd>
{{if .ParamStr}}<dt>Parameters</dt><dd><code>{{.ParamStr}}</code></dd>{{end}}
<dt>Current state</dt><dd>{{.State}}</dd>
<dt>Effect</dt><dd>approving will {{.Effect}}</dd>
{{if .RequestText}}<dt>Request</dt><dd><code>{{.RequestText}}</code></dd>{{end}}
<dt>Risk</dt><dd>{{.Risk}}</dd>
<dt>Asked</dt><dd>{{when .Created}}</dd>
<dt>Expires</dt><dd>{{when .Expires}}</dd>
</dl>
{{if .Pending}}<div class="decide">
{{if .Unbound}}<p class="note">This grant does not bind what it shows (an earlier version wrote it, or it was edited): the page cannot approve it. Repeat the call for a new code.</p>{{else if .Confirm}}<form method="post" action="{{.Code}}"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="decision" value="approve">
<label for="confirm">Type the {{.ConfirmWhat}} <code>{{.Confirm}}</code> to approve</label>
<input type="text" id="confirm" name="confirm" autocomplete="off" spellcheck="false" required{{if ne .ConfirmWhat "VMID"}} class="wide"{{end}}>
<button type="submit" class="approve">Approve once</button></form>{{else}}<p class="note">This grant names no guest and no request to type: the page cannot approve it.</p>{{end}}
<form method="post" action="{{.Code}}"><input type="hidden" name="csrf" value="{{$.CSRF}}"><input type="hidden" name="decision" value="deny">
<label>Refuse this request</label><button type="submit" class="deny">Deny</button></form>
</div>
<p class="note">Approving lets the same MCP call, repeated unchanged on this cluster before the expiry, run once — only while everything above (state, effect, risk, request) is still what it does; otherwise the call asks for a new grant.</p>
{{else}}<p class="note">This grant can no longer be decided.</p>{{end}}
{{end}}<p><a href="{{.Base}}">Back to the list</a></p>{{template "foot" .}}{{end}}`))
}

// render writes a page. Templates execute into a buffer first, so a
// template error never leaves half a page with a 200 status.
func (h *Handler) render(w http.ResponseWriter, status int, name string, d pageData) {
	d.Base = h.path
	if d.Session != nil {
		d.CSRF = d.Session.csrf
	}
	var buf bytes.Buffer
	if err := templates().ExecuteTemplate(&buf, name, d); err != nil {
		h.log.Error("approval page: template", "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
