package doctor

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Exit codes of doctor, beyond 0 (everything checked is fine).
const (
	// ExitProblems: something does not work (unreachable, TLS not
	// trusted, token rejected, node missing or offline, privileges missing).
	ExitProblems = 1
	// ExitDangerous: everything works, but the token holds dangerous
	// privileges no enabled tool needs. Distinct so automation notices.
	ExitDangerous = 3
)

// Bounds: doctor must answer quickly even when Proxmox does not.
const (
	doctorDialTimeout = 5 * time.Second
	doctorStepTimeout = 15 * time.Second
)

// Trust is how the Proxmox certificate is verified.
type Trust struct {
	Pin      string // PVE_TLS_FINGERPRINT
	CAPEM    []byte // PVE_CA_FILE's content
	CAFile   string // PVE_CA_FILE
	Insecure bool   // PVE_TLS_INSECURE
}

// Setup is what doctor checks: the client the binary built, and how.
type Setup struct {
	Client  *proxmoxsafe.Client
	Options *mcpserver.Options
	Trust   Trust
	Config  *settings.Config
	Version string // the binary's, shown in the report
	// GrantDir is the server's grant directory ("" when none is known).
	GrantDir string
	// AuditKey reads the audit log's key file as the server does.
	AuditKey func(path string) ([]byte, error)
}

// exitUsage is the binary's exit code for bad usage or configuration.
const exitUsage = 2

// report collects doctor's findings. As text it prints them as it goes,
// so a slow step shows what already passed; with --json it prints one JSON
// document at the end (doctorJSON).
type report struct {
	w                  io.Writer
	json               bool
	problems, warnings int
	dangerous          bool
	checks             []doctorCheck
	version            string
}

// doctorCheck is one finding: status ok, info, warn or fail; the message;
// the detail lines (commands to run, fingerprints).
type doctorCheck struct {
	Status  string   `json:"status"`
	Message string   `json:"message"`
	Details []string `json:"details,omitempty"`
}

func (r *report) ok(format string, args ...any) { r.line("ok", format, args...) }
func (r *report) info(format string, args ...any) {
	r.line("info", format, args...)
}
func (r *report) warn(format string, args ...any) {
	r.warnings++
	r.line("warn", format, args...)
}
func (r *report) fail(format string, args ...any) {
	r.problems++
	r.line("FAIL", format, args...)
}
func (r *report) line(tag, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.checks = append(r.checks, doctorCheck{Status: strings.ToLower(tag), Message: msg})
	if !r.json {
		fmt.Fprintf(r.w, "  %-6s %s\n", "["+tag+"]", msg)
	}
}
func (r *report) detail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if n := len(r.checks); n > 0 {
		r.checks[n-1].Details = append(r.checks[n-1].Details, msg)
	}
	if !r.json {
		fmt.Fprintf(r.w, "           %s\n", msg)
	}
}

// Run checks, in order: configuration, TCP reachability, TLS trust,
// the token (/version), the allowlisted nodes (/cluster/status) and the
// privileges of every enabled tool. It stops early when going on would be
// pointless or unsafe: the token is never sent to a server whose
// certificate is not trusted.
func Run(ctx context.Context, s Setup, w io.Writer) int {
	a, cfg := s, s.Config
	r := &report{w: w, json: cfg.JSON, version: s.Version}
	base, err := url.Parse(a.Client.BaseURL())
	if err != nil { // New validated it
		fmt.Fprintf(w, "proxmox-safe-mcp doctor: %v\n", err)
		return exitUsage
	}
	if !r.json {
		fmt.Fprintf(w, "proxmox-safe-mcp doctor (%s)\n", r.version)
	}
	pol := a.Client.Policy()
	mode := "profile " + cfg.Profile + ", mutation classes " + settings.ClassNames(pol.Classes)
	if pol.ReadOnly {
		mode += ", read-only"
	}
	auth := a.Client.AuthStatus()
	r.ok("configuration: %s, %s, %s, allowed nodes %s", base.Redacted(), authSummary(auth), mode, settings.DescribeNodes(pol.AllowedNodes))
	if cfg.Demo {
		r.info("demo mode: this checks the simulated cluster, not a real one")
	}
	checkPolicy(r, cfg, pol, s.GrantDir) // policy.go
	checkSelection(r, cfg, a.Client, s.Options)
	checkAudit(r, cfg, s.AuditKey) // audit.go

	hostport := base.Host
	if base.Port() == "" {
		hostport = net.JoinHostPort(base.Hostname(), map[string]string{"https": "443", "http": "80"}[base.Scheme])
	}
	dialCtx, cancel := context.WithTimeout(ctx, doctorDialTimeout)
	start := time.Now()
	conn, err := (&net.Dialer{}).DialContext(dialCtx, "tcp", hostport)
	cancel()
	if err != nil {
		r.fail("reachable: cannot open a TCP connection to %s: %v", hostport, dialError(err))
		r.detail("check PVE_URL (host and port, usually 8006), DNS, routing and firewalls")
		return r.finish()
	}
	conn.Close()
	r.ok("reachable: TCP connection to %s in %s", hostport, time.Since(start).Round(100*time.Microsecond))

	if base.Scheme == "https" {
		if !checkTLS(ctx, r, hostport, base.Hostname(), a.Trust) {
			return r.finish()
		}
	} else {
		r.warn("TLS: none (plain http:// allowed by PVE_ALLOW_INSECURE_HTTP): the token crosses the network in clear text")
	}

	stepCtx, cancel := context.WithTimeout(ctx, doctorStepTimeout)
	defer cancel()
	ver, err := a.Client.Version(stepCtx)
	step := "token"
	if auth.Method == proxmoxsafe.AuthTicket {
		step = "login"
	}
	switch {
	case errors.Is(err, proxmoxsafe.ErrUnauthorized) && auth.Method == proxmoxsafe.AuthTicket:
		r.fail("login: refused by Proxmox: %v", err)
		r.detail("check PVE_USERNAME (user@realm, e.g. root@pam) and the password, that the user exists, is enabled and has no second factor; an API token (PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET) is recommended")
		return r.finish()
	case errors.Is(err, proxmoxsafe.ErrUnauthorized):
		r.fail("token: rejected by Proxmox (401): %v", err)
		r.detail("check PVE_API_TOKEN_ID (user@realm!tokenname) and the secret, that the token exists and has not expired (pveum user token list <user>), and that the user is enabled")
		return r.finish()
	case err != nil:
		r.fail("%s: GET /version failed: %v", step, err)
		return r.finish()
	}
	r.ok("%s: accepted; Proxmox VE %s", step, ver.Version)
	if life := ticketLifetime(a.Client.AuthStatus(), time.Now()); life != "" {
		r.ok("login: %s", life)
		r.info("API tokens are recommended over a password: no login, no renewal, privileges of their own (pveum user token add)")
	}

	checkNodes(stepCtx, r, a.Client, pol.AllowedNodes)
	checkPrivileges(stepCtx, r, a.Client, a.Options)
	return r.finish()
}

func (r *report) finish() int {
	var code int
	var result string
	switch {
	case r.problems > 0:
		code = ExitProblems
		result = fmt.Sprintf("%d problem(s), %d warning(s): the setup does not work as configured.", r.problems, r.warnings)
	case r.dangerous:
		code = ExitDangerous
		result = fmt.Sprintf("working, but the token holds dangerous privileges it does not need (%d warning(s)); exit code %d.", r.warnings, ExitDangerous)
	case r.warnings > 0:
		result = fmt.Sprintf("working, with %d warning(s).", r.warnings)
	default:
		result = "everything checked is fine."
	}
	if r.json {
		writeJSON(r.w, doctorJSON{Version: r.version, Checks: r.checks, Problems: r.problems,
			Warnings: r.warnings, Dangerous: r.dangerous, Result: result, ExitCode: code})
		return code
	}
	fmt.Fprintln(r.w, "Result: "+result)
	return code
}

// doctorJSON is `doctor --json`: every check in order, the counts, the
// one-line result and the exit code the command returns.
type doctorJSON struct {
	Version   string        `json:"version"`
	Checks    []doctorCheck `json:"checks"`
	Problems  int           `json:"problems"`
	Warnings  int           `json:"warnings"`
	Dangerous bool          `json:"dangerous"`
	Result    string        `json:"result"`
	ExitCode  int           `json:"exit_code"`
}

// dialError shortens the net package's wrapping.
func dialError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", doctorDialTimeout)
	}
	return err
}

// checkTLS fetches the server certificate without trusting it, prints its
// fingerprint, and verifies it the way the client will. It sends nothing
// but the TLS handshake.
func checkTLS(ctx context.Context, r *report, hostport, host string, t Trust) bool {
	dialCtx, cancel := context.WithTimeout(ctx, doctorDialTimeout)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, ServerName: host, MinVersion: tls.VersionTLS12}} //nolint:gosec // inspected, then verified below
	c, err := d.DialContext(dialCtx, "tcp", hostport)
	if err != nil {
		r.fail("TLS: handshake with %s failed: %v", hostport, dialError(err))
		return false
	}
	state := c.(*tls.Conn).ConnectionState()
	c.Close()
	if len(state.PeerCertificates) == 0 {
		r.fail("TLS: the server sent no certificate")
		return false
	}
	leaf := state.PeerCertificates[0]
	sum := sha256.Sum256(leaf.Raw)
	fp := fingerprint(sum[:])
	inter := x509.NewCertPool()
	for _, cert := range state.PeerCertificates[1:] {
		inter.AddCert(cert)
	}
	verify := func(roots *x509.CertPool) error {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host})
		return err
	}
	howToTrust := func() {
		r.detail("server certificate SHA-256 fingerprint: %s", fp)
		r.detail("compare it with `pvenode cert info` on the node; if it matches, pin it with PVE_TLS_FINGERPRINT=%s", fp)
		r.detail("or set PVE_CA_FILE to the CA that signed it (a cluster's own CA is /etc/pve/pve-root-ca.pem on any node)")
	}
	switch {
	case t.Insecure:
		r.warn("TLS: NOT verified (PVE_TLS_INSECURE): anyone on the network path can read the token; server certificate SHA-256 %s — pin it with PVE_TLS_FINGERPRINT instead", fp)
		return true
	case t.Pin != "":
		want := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(t.Pin), ":", ""))
		if want != strings.ToUpper(hex.EncodeToString(sum[:])) {
			r.fail("TLS: NOT trusted: the server certificate's fingerprint does not match PVE_TLS_FINGERPRINT")
			howToTrust()
			return false
		}
		how := "the pinned fingerprint (PVE_TLS_FINGERPRINT)"
		if len(t.CAPEM) > 0 {
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(t.CAPEM)
			if err := verify(roots); err != nil {
				r.fail("TLS: NOT trusted: the fingerprint matches but the certificate does not verify against PVE_CA_FILE %s: %v", t.CAFile, err)
				howToTrust()
				return false
			}
			how += " and the CA file " + t.CAFile
		}
		r.ok("TLS: trusted by %s; server certificate SHA-256 %s", how, fp)
		return true
	case len(t.CAPEM) > 0:
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(t.CAPEM)
		if err := verify(roots); err != nil {
			r.fail("TLS: NOT trusted: the certificate does not verify against PVE_CA_FILE %s: %v", t.CAFile, err)
			howToTrust()
			return false
		}
		r.ok("TLS: trusted by the CA file %s; server certificate SHA-256 %s", t.CAFile, fp)
		return true
	default:
		if err := verify(nil); err != nil {
			r.fail("TLS: NOT trusted by the system's root CAs: %v", err)
			howToTrust()
			return false
		}
		r.ok("TLS: trusted by the system's root CAs; server certificate SHA-256 %s", fp)
		return true
	}
}

func fingerprint(sum []byte) string {
	h := strings.ToUpper(hex.EncodeToString(sum))
	parts := make([]string, 0, len(h)/2)
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

// checkNodes confirms each allowlisted node is a cluster member and online.
func checkNodes(ctx context.Context, r *report, client *proxmoxsafe.Client, allowed []string) {
	if len(allowed) == 0 {
		if pol := client.Policy(); !pol.ReadOnly && len(pol.Classes) > 0 {
			r.info("nodes: none allowed (see the policy warning above)")
			return
		}
		r.warn("nodes: PVE_ALLOWED_NODES is empty: node-targeted tools and every mutation are refused")
		return
	}
	st, err := client.ClusterStatus(ctx)
	if err != nil {
		r.fail("nodes: cannot read the cluster status to check %s: %v", settings.DescribeNodes(allowed), err)
		return
	}
	for _, name := range allowed {
		i := slices.IndexFunc(st.Nodes, func(n proxmoxsafe.ClusterNode) bool { return n.Name == name })
		switch {
		case i < 0:
			var members []string
			for _, n := range st.Nodes {
				members = append(members, n.Name)
			}
			r.fail("node %s: not a member of the cluster (members: %s); fix PVE_ALLOWED_NODES", name, settings.DescribeNodes(members))
		case !st.Nodes[i].Online:
			r.fail("node %s: offline", name)
		default:
			r.ok("node %s: member, online", name)
		}
	}
}

// checkPrivileges runs the permissions check of the tools this
// configuration offers and prints what is missing and what is too much.
func checkPrivileges(ctx context.Context, r *report, client *proxmoxsafe.Client, opts *mcpserver.Options) {
	res, err := mcpserver.CheckPermissions(ctx, client, opts)
	if err != nil {
		r.fail("privileges: cannot read the token's permissions: %v", err)
		return
	}
	tools := map[string][]string{} // privilege@path -> tools
	for _, tp := range res.Tools {
		for _, ch := range tp.Checks {
			k := ch.Privilege + "@" + ch.Path
			if !slices.Contains(tools[k], tp.Tool) {
				tools[k] = append(tools[k], tp.Tool)
			}
		}
	}
	missing := 0
	for _, m := range res.Missing {
		var who []string
		for _, p := range m.Privileges {
			for _, t := range tools[p+"@"+m.Path] {
				if !slices.Contains(who, t) {
					who = append(who, t)
				}
			}
		}
		if m.Optional {
			r.warn("privileges: optional %s on %s missing (%s work without it, but Proxmox then silently leaves out what the token cannot see, or refuses the option that needs it, such as guest_suspend todisk; docs/TOOLS.md says which)",
				strings.Join(m.Privileges, ", "), m.Path, strings.Join(who, ", "))
		} else {
			missing++
			r.fail("privileges: %s on %s missing, needed by %s", strings.Join(m.Privileges, ", "), m.Path, strings.Join(who, ", "))
		}
		r.detail("%s", m.Command)
		if m.UserCommand != "" {
			r.detail("%s   # the token's user needs it too (privilege separation)", m.UserCommand)
		}
	}
	if len(res.Missing) > 0 {
		r.detail("create the role first: %s", res.RoleCommand)
		if res.OptionalRoleCommand != "" {
			r.detail("optional role: %s", res.OptionalRoleCommand)
		}
	}
	if missing == 0 {
		r.ok("privileges: every enabled tool (%d) has what it requires", len(res.Tools))
	}
	var other []string
	for _, x := range res.Excess {
		if x.Dangerous {
			r.dangerous = true
			r.warn("privileges: %s held on %s but no enabled tool needs it — dangerous: the token %s", x.Privilege, strings.Join(x.Paths, ", "), x.Risk)
		} else {
			other = append(other, x.Privilege)
		}
	}
	if len(other) > 0 {
		r.info("privileges held beyond need (harmless but unnecessary): %s", strings.Join(other, ", "))
	}
	if r.dangerous {
		r.detail("prefer a token with only the required role: %s", res.RoleCommand)
	}
	for _, n := range res.Notes {
		r.info("%s", n)
	}
}

// writeJSON writes v indented, as the binary's other JSON outputs.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
