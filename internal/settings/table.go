package settings

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/approvalweb"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcphttp"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// setting is one configuration knob: a flag, an environment variable, or
// both. Both go through the same set function, so they accept exactly the
// same values.
type setting struct {
	flag    string // without dashes; "" = no flag
	env     string // "" = no environment variable
	def     string // default shown in --help
	boolean bool
	help    string
	set     func(c *Config, v string) error
	// docDefault and doc are the setting's row in docs/CONFIGURATION.md
	// (Markdown; internal/docgen writes it): the default as the reference
	// shows it, and the full meaning, where help is the one line --help
	// shows. doc "" means help.
	docDefault, doc string
	// aliases are other programs' names for this setting (alias.go).
	aliases []alias
	// secret keeps the value out of error messages (a conflict between
	// the setting's name and an alias names both but shows no value).
	secret bool
}

// name says where a value came from, for error messages.
func (s *setting) name(fromFlag bool) string {
	switch {
	case fromFlag && s.env != "":
		return "--" + s.flag + " (" + s.env + ")"
	case fromFlag:
		return "--" + s.flag
	case s.flag != "":
		return s.env + " (--" + s.flag + ")"
	default:
		return s.env
	}
}

// parseBool is deliberately stricter than strconv.ParseBool: a typo such as
// "ture" or "yes" must not silently mean false.
func parseBool(v string) (bool, error) {
	switch v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("must be one of true, false, 1, 0 (got %s)", sanitize.Quote(v))
}

func boolSetter(dst func(c *Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*dst(c) = b
		return nil
	}
}

// selectionSetter sets one list of the tool selection and refuses a name
// that is no toolset or tool.
func selectionSetter(set func(*mcpserver.Selection, []string)) func(*Config, string) error {
	return func(c *Config, v string) error {
		var one mcpserver.Selection
		set(&one, splitList(v))
		if err := one.Check(); err != nil {
			return err
		}
		set(&c.Selection, splitList(v))
		return nil
	}
}

func toolsetList(v []string) []mcpserver.Toolset {
	out := make([]mcpserver.Toolset, len(v))
	for i, s := range v {
		out[i] = mcpserver.Toolset(s)
	}
	return out
}

// toolsetNames lists the toolsets' names for the help text.
func toolsetNames() string {
	var names []string
	for _, ts := range mcpserver.Toolsets() {
		names = append(names, string(ts.Name))
	}
	return strings.Join(names, ", ")
}

// toolsetsDoc lists each toolset with its tools for the reference.
func toolsetsDoc() string {
	var parts []string
	for _, ts := range mcpserver.Toolsets() {
		parts = append(parts, "`"+string(ts.Name)+"` ("+strings.Join(ts.Tools, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

func stringSetter(dst func(c *Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*dst(c) = strings.TrimSpace(v)
		return nil
	}
}

// table is the single list behind flag parsing, environment lookup,
// --help and docs/CONFIGURATION.md.
var table = append([]*setting{
	{flag: "demo", boolean: true,
		docDefault: "off",
		doc:        "See above.",
		help:       "run against an in-process simulated Proxmox VE cluster; ignores every PVE_* variable",
		set:        boolSetter(func(c *Config) *bool { return &c.Demo })},
	{flag: "url", env: "PVE_URL",
		docDefault: "— (required)",
		doc:        "Proxmox VE address, `https://host:8006`, with or without `/api2/json`. No credentials, query or fragment.",
		help:       "Proxmox VE API address, e.g. https://pve1.example.com:8006 (required)",
		set:        stringSetter(func(c *Config) *string { return &c.URL }),
		aliases:    []alias{sameAlias("PVE_BASE_URL")}},
	{flag: "token-id", env: "PVE_API_TOKEN_ID",
		docDefault: "— (required, or `PVE_USERNAME`)",
		doc:        "API token id, `user@realm!tokenname` (realm and token name: a letter, then at least one more letter, digit, `.`, `-` or `_`). Recommended over a password. The whole `PVEAPIToken=user@realm!name=SECRET` value Proxmox shows is recognised and refused with how to split it; the secret is never repeated.",
		help:       "API token id, user@realm!tokenname (required)",
		set:        stringSetter(func(c *Config) *string { return &c.TokenID })},
	{env: "PVE_API_TOKEN_SECRET", secret: true,
		docDefault: "—",
		doc:        "The token secret. Required unless the file below is set; setting both is an error.",
		help:       "API token secret (required unless PVE_API_TOKEN_SECRET_FILE is set); deliberately no flag: command lines are visible to other local users",
		set: func(c *Config, v string) error {
			c.TokenSecret, c.SecretFrom = Secret{v}, "PVE_API_TOKEN_SECRET"
			return nil
		}},
	{flag: "token-secret-file", env: "PVE_API_TOKEN_SECRET_FILE",
		docDefault: "—",
		doc:        "A file holding the secret. One trailing newline (`\\n` or `\\r\\n`) is removed, nothing else; any other white space is an error. Must be a regular file (symlinks are followed), at most 4 KiB. `--token-secret-file` on the command line also overrides `PVE_API_TOKEN_SECRET`.",
		help:       "file holding the API token secret; one trailing newline is removed",
		set:        stringSetter(func(c *Config) *string { return &c.TokenSecretFile })},
	{flag: "username", env: "PVE_USERNAME",
		docDefault: "—",
		doc:        "**Instead of a token** (see *Password login* below): the user for a password login, `user@realm` (`root@pam`, `automation@pve`), or `user` with `PVE_REALM`. Setting it together with any `PVE_API_TOKEN_*` is an error.",
		help:       "instead of an API token: user for password (ticket) login, user@realm such as root@pam (or user with PVE_REALM); accounts with two-factor authentication are refused; tokens are recommended",
		set:        stringSetter(func(c *Config) *string { return &c.Username })},
	{env: "PVE_PASSWORD", secret: true,
		docDefault: "—",
		doc:        "That user's password, at least 8 characters. Required with `PVE_USERNAME` unless the file below is set; setting both is an error.",
		help:       "password of PVE_USERNAME (or PVE_PASSWORD_FILE); deliberately no flag: command lines are visible to other local users",
		set:        setPassword},
	{flag: "password-file", env: "PVE_PASSWORD_FILE",
		docDefault: "—",
		doc:        "A file holding the password; one trailing newline is removed, nothing else (a password may contain spaces). `--password-file` on the command line also overrides `PVE_PASSWORD`.",
		help:       "file holding the password of PVE_USERNAME; one trailing newline is removed",
		set:        stringSetter(func(c *Config) *string { return &c.PasswordFile })},
	{flag: "realm", env: "PVE_REALM",
		docDefault: "—",
		doc:        "Realm appended to `PVE_USERNAME` (`root` + `pam` = `root@pam`); a user name already ending in `@<realm>` is taken as is.",
		help:       "realm appended to PVE_USERNAME when it has none, e.g. pam or pve",
		set:        stringSetter(func(c *Config) *string { return &c.Realm })},
	{flag: "ca-file", env: "PVE_CA_FILE",
		docDefault: "system roots",
		doc:        "PEM bundle of the CA(s) that signed the Proxmox certificate.",
		help:       "PEM file of the CA(s) that signed the Proxmox certificate, instead of the system roots",
		set:        stringSetter(func(c *Config) *string { return &c.CAFile })},
	{flag: "tls-fingerprint", env: "PVE_TLS_FINGERPRINT",
		docDefault: "—",
		doc:        "SHA-256 fingerprint of the Proxmox certificate, hex with or without colons (as `pvenode cert info` prints it). Pins the leaf certificate; with `PVE_CA_FILE` too, both must pass.",
		help:       "SHA-256 fingerprint of the Proxmox certificate to pin (as `pvenode cert info` prints it)",
		set:        stringSetter(func(c *Config) *string { return &c.Fingerprint })},
	{flag: "tls-insecure", env: "PVE_TLS_INSECURE", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "**Dangerous.** Skips certificate verification; logged as a warning at startup. Refused together with a fingerprint or CA file.",
		help:       "DANGEROUS: skip TLS certificate verification entirely; prefer PVE_TLS_FINGERPRINT",
		set:        boolSetter(func(c *Config) *bool { return &c.TLSInsecure }),
		aliases:    []alias{invertedBoolAlias("PVE_VERIFY_SSL")}},
	{flag: "allow-insecure-http", env: "PVE_ALLOW_INSECURE_HTTP", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "**Dangerous.** Allows a plain `http://` URL (the token crosses the network in clear text).",
		help:       "DANGEROUS: allow a plain http:// URL (the token crosses the network in clear text)",
		set:        boolSetter(func(c *Config) *bool { return &c.AllowInsecureHTTP })},
	{flag: "allowed-nodes", env: "PVE_ALLOWED_NODES", def: "none",
		docDefault: "empty",
		doc:        "Comma-separated node names (`pve1,pve2`) that `node_status` and every mutation may target. Empty allows none (a startup warning says so): the mutation tools are then not listed at all, since none could work; cluster-wide reads (`cluster_status`, `list_guests`) still work.",
		help:       "comma-separated nodes that node_status and every mutation may target; empty allows none",
		set: func(c *Config, v string) error {
			c.AllowedNodes = nil
			for n := range strings.SplitSeq(v, ",") {
				n = strings.TrimSpace(n)
				if n == "" {
					continue
				}
				if !proxmoxsafe.ValidNode(n) {
					return fmt.Errorf("%s is not a valid Proxmox node name", sanitize.Quote(n))
				}
				c.AllowedNodes = append(c.AllowedNodes, n)
			}
			return nil
		}},
	{flag: "profile", env: "PROXMOX_SAFE_PROFILE", def: string(proxmoxsafe.ProfileSafe),
		docDefault: "`safe`",
		doc:        profileDoc(),
		help:       profileHelp(),
		set:        setProfile,
		aliases:    []alias{sameAlias("MCP_PROXMOX_PROFILE")}},
	{flag: "read-only", env: "PROXMOX_SAFE_READ_ONLY", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "Refuses every mutation and lets only GET requests reach Proxmox, whatever the profile. Mutation tools are not listed; the tools annotated read-only are (`api_get` too, when the profile enables `gateway`).",
		help:       "refuse every mutation and send only GET requests to Proxmox, whatever the profile",
		set:        boolSetter(func(c *Config) *bool { return &c.ReadOnly })},
	{flag: "gateway-write", env: "PROXMOX_SAFE_GATEWAY_WRITE", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "Also enables the `gateway-write` class, which no profile enables: `api_request` sends one POST, PUT or DELETE to an API path outside the gateway's deny list (docs/SECURITY.md), approved for its exact method, path and parameter digest; a parameter that carries a secret (any the gateway redacts in answers: passwords, tokens, keys, `sshkeys`, …) is refused, so the person approving sees every value (docs/SECURITY.md, *Digests*). Its default approval is `elicit,grant` (a person); `PROXMOX_SAFE_APPROVALS=gateway-write=phrase` lets the exact phrase `APPROVE <method> <path> params=<digest>` approve it instead. Read-only mode still wins.",
		help:       "also enable the gateway-write class, which no profile enables: api_request sends one POST, PUT or DELETE to an API path outside the deny list, approved for its exact method, path and parameters (by default by elicit, then grant); read-only mode still wins",
		set:        boolSetter(func(c *Config) *bool { return &c.GatewayWrite })},
	{flag: "toolsets", env: "PROXMOX_SAFE_TOOLSETS", def: "every toolset",
		docDefault: "every toolset",
		doc:        "Offers only the tools of these toolsets (comma-separated) and those `PROXMOX_SAFE_TOOLS` names: " + toolsetsDoc() + ". The selection only hides: a tool is still offered only when the profile enables its class, and a hidden tool is refused as unknown. Fewer tools cost every conversation fewer tokens.",
		help:       "offer only the tools of these toolsets (comma-separated: " + toolsetNames() + "), plus those --tools names; the profile still decides what is allowed",
		set:        selectionSetter(func(s *mcpserver.Selection, v []string) { s.Toolsets = toolsetList(v) })},
	{flag: "tools", env: "PROXMOX_SAFE_TOOLS", def: "none",
		docDefault: "none",
		doc:        "Offers these tools (comma-separated names) besides those of `PROXMOX_SAFE_TOOLSETS`; alone, only these. Only hides, like the toolsets.",
		help:       "offer these tools (comma-separated names) besides those of --toolsets; alone, only these",
		set:        selectionSetter(func(s *mcpserver.Selection, v []string) { s.Tools = v })},
	{flag: "exclude-toolsets", env: "PROXMOX_SAFE_EXCLUDE_TOOLSETS", def: "none",
		docDefault: "none",
		doc:        "Hides the tools of these toolsets (comma-separated), whatever else selects them.",
		help:       "hide the tools of these toolsets (comma-separated), whatever else selects them",
		set:        selectionSetter(func(s *mcpserver.Selection, v []string) { s.ExcludeToolsets = toolsetList(v) })},
	{flag: "exclude-tools", env: "PROXMOX_SAFE_EXCLUDE_TOOLS", def: "none",
		docDefault: "none",
		doc:        "Hides these tools (comma-separated names), whatever else selects them.",
		help:       "hide these tools (comma-separated names), whatever else selects them",
		set:        selectionSetter(func(s *mcpserver.Selection, v []string) { s.ExcludeTools = v })},
	{flag: "approvals", env: "PROXMOX_SAFE_APPROVALS", def: "phrase for every class",
		docDefault: "per class: see *Defaults per profile*",
		doc:        "How each mutation class is approved: `CLASS=LEVEL[,LEVEL…]`, classes separated by `;`, levels in order of preference, e.g. `power=elicit,grant;snapshot=elicit`. Levels: `none`, `phrase`, `elicit`, `grant`. A class left out keeps its default (`phrase`; `none` for `responder`; `elicit,grant` for a class that destroys without a way back and for `gateway-write`). See *Approval levels* below.",
		help:       "how each mutation class is approved, levels in order of preference: CLASS=LEVEL[,LEVEL…] separated by ';', e.g. power=elicit,phrase;snapshot=elicit; levels: none, phrase (the exact APPROVE phrase), elicit (the person at the MCP client confirms in a form; a client that cannot elicit gets the next level or a refusal), grant (the operator runs proxmox-safe-mcp approve CODE on the host)",
		set:        parseApprovals},
	{flag: "grant-dir", env: "PROXMOX_SAFE_GRANT_DIR", def: "grants beside the audit log",
		docDefault: "`grants` beside the audit log",
		doc:        "Directory (`0700`, files `0600`) of out-of-band grants for the `grant` level. `approve`, `deny` and `grants list` find it from `PROXMOX_SAFE_GRANT_DIR`, else beside `PROXMOX_SAFE_AUDIT_LOG`, else in the default state directory: set the variable (not the flag) when the server's audit log is not the default.",
		help:       "directory of out-of-band grants (approval level grant); the approve, deny and grants commands find it the same way",
		set:        stringSetter(func(c *Config) *string { return &c.GrantDir })},
	{flag: "operator-token-file", env: "PROXMOX_SAFE_OPERATOR_TOKEN_FILE", def: "off",
		docDefault: "off",
		doc:        "HTTP mode only: serves the operator's **approval page** for grants at `/approve/` on the MCP listener, behind the secret in this file (one trailing newline removed; at least 16 characters, e.g. `openssl rand -hex 32`). Must differ from `MCP_AUTH_TOKEN` and the Proxmox secret and password (startup refuses otherwise), and at least one class must use the `grant` level. See *The approval page* below.",
		help:       "HTTP mode: serve the operator's approval page for grants at /approve/ on the MCP listener, behind this file's secret (at least 16 characters, e.g. openssl rand -hex 32; never the MCP token)",
		set:        stringSetter(func(c *Config) *string { return &c.ApprovalPage.TokenFile })},
	{flag: "operator-name", env: "PROXMOX_SAFE_OPERATOR_NAME", def: approvalweb.DefaultOperator,
		docDefault: "`operator`",
		doc:        "The name recorded for decisions made on the page, as `approval-page:NAME` (letters, digits, `._@-`), in the grant and the audit record.",
		help:       "the name recorded (as " + approvalweb.OperatorPrefix + "NAME) in grants and audit records for decisions made on the approval page",
		set:        stringSetter(func(c *Config) *string { return &c.ApprovalPage.Operator })},
	{flag: "approval-url", env: "PROXMOX_SAFE_APPROVAL_URL", def: "http://ADDR/approve/ on loopback",
		docDefault: "`http://ADDR/approve/` on loopback",
		doc:        "The page's URL as the operator opens it; its path must be `/approve/` (a proxy must not move the page under a prefix: its links and cookie use `/approve/`). Named in grant refusals and URL elicitations; `https://` makes the login cookie `Secure`; its origin is accepted for form posts (for a proxy that rewrites `Host`). Required when not bound to loopback.",
		help:       "the approval page's URL as the operator opens it (its path is /approve/); named in grant refusals and URL elicitations; https makes the login cookie Secure",
		set:        setApprovalURL},
	{flag: "elicit-key-file", env: "PROXMOX_SAFE_ELICIT_KEY_FILE", def: "elicit.key beside the audit log when a class uses elicit; random per start in the demo",
		docDefault: "`elicit.key` beside the audit log when a class uses `elicit`; none in the demo",
		doc:        "File holding the key that seals elicitation state: exactly 32 random bytes as 64 hex digits (`openssl rand -hex 32`), so an elicitation pending across a restart can still be answered (once: the used nonces are kept in the grant directory). Created `0600` when missing; refused at start unless it is a regular file owned by the server's user (a systemd credential may have another owner); a mode that lets group or others write it is refused, one that lets them read it draws a start-up warning, as for every secret and key file (see *Secret and key files*). Unset and no class using `elicit`: a random key per start. In the demo it needs `PROXMOX_SAFE_GRANT_DIR`. See *The elicitation key*.",
		help:       "file holding the key (64 hex digits, e.g. openssl rand -hex 32) that seals elicitation state, so an elicitation pending across a restart can still be answered; created 0600 when missing; refused unless owned by you and not readable by group or others",
		set:        stringSetter(func(c *Config) *string { return &c.ElicitKeyFile })},
	{flag: "audit-log", env: "PROXMOX_SAFE_AUDIT_LOG", def: "$XDG_STATE_HOME/proxmox-safe-mcp/audit.jsonl when mutations are enabled",
		docDefault: "`$XDG_STATE_HOME/proxmox-safe-mcp/audit.jsonl` (else `~/.local/state/…`) when a mutation is enabled",
		doc:        "Append-only JSON-lines audit log with an anchor record, a keyed (HMAC-SHA256) chain and a sealed tail (`FILE.seal`); created `0600`, missing directories `0700`. An existing file is verified before it is continued; one that does not verify is refused with advice. Must be a regular file (a FIFO or device is refused at once). Read-only setups need none.",
		help:       "append-only, keyed and sealed JSON-lines audit log; missing parent directories are created (0700), the file 0600",
		set:        stringSetter(func(c *Config) *string { return &c.AuditLog }),
		aliases:    []alias{sameAlias("MCP_PROXMOX_AUDIT_LOG")}},
	{flag: "audit-key-file", env: "PROXMOX_SAFE_AUDIT_KEY_FILE", def: "the audit log's path + .key",
		docDefault: "the audit log's path + `.key`",
		doc:        "The chain's HMAC key as hex (at least 16 bytes; `openssl rand -hex 32`). Created (32 random bytes, `0600`) together with a new log; for an existing log it must be the key it was written with. Keep it where the log's readers and backups cannot read it (e.g. a systemd credential) for the strongest guarantee; a key file that group or others can write is refused at start, one they can read draws a warning, as for every secret and key file (see *Secret and key files*).",
		help:       "file holding the audit log's HMAC key (64 hex digits, e.g. openssl rand -hex 32); created 0600 with a new log; keep it where the log's readers cannot read it",
		set:        stringSetter(func(c *Config) *string { return &c.AuditKeyFile })},
	{flag: "audit-syslog", env: "PROXMOX_SAFE_AUDIT_SYSLOG", def: "off",
		docDefault: "off",
		doc:        "Also send every audit record, once on disk, to syslog (`log/syslog`, tag `proxmox-safe-mcp-audit`, facility authpriv): `local` (the local syslog/journald socket), `udp://HOST:PORT`, `tcp://HOST:PORT` or `unix:///PATH`. A copy off the host is tamper evidence the host cannot fake; a send failure refuses the mutation.",
		help:       "also send every audit record to syslog, to keep a copy off the host: local (the local syslog/journald socket), udp://HOST:PORT, tcp://HOST:PORT or unix:///PATH",
		set:        setAuditSyslog},
	{flag: "metrics-addr", env: "PROXMOX_SAFE_METRICS_ADDR", def: "off",
		docDefault: "off",
		doc:        "Serve Prometheus metrics at `http://ADDR/metrics` on their own listener (stdio and HTTP alike): tool calls by tool and outcome, refusals by kind, call durations per tool, upstream requests by method and status class with their latency, MCP sessions, and the process's Go runtime figures; with a clusters file the calls, refusals and requests also by `cluster`. No authentication: keep it on loopback (`127.0.0.1:9464`) or a network only the scraper reaches; another address is started with a warning. Never argument values, guest names or paths.",
		help:       "serve Prometheus metrics at http://ADDR/metrics on their own listener, e.g. 127.0.0.1:9464 (no authentication: keep it on loopback)",
		set: func(c *Config, v string) error {
			v = strings.TrimSpace(v)
			host, port, err := net.SplitHostPort(v)
			if err != nil || port == "" {
				return fmt.Errorf("must be HOST:PORT, e.g. 127.0.0.1:9464 (got %s)", sanitize.Quote(v))
			}
			if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
				return fmt.Errorf("the port must be a number from 0 to 65535 (got %s)", sanitize.Quote(port))
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				c.Warnings = append(c.Warnings, "PROXMOX_SAFE_METRICS_ADDR "+v+" is not a loopback address: the metrics endpoint has no authentication, so anyone who reaches it reads the tool call counts")
			}
			c.MetricsAddr = v
			return nil
		}},
	{flag: "lock-dir", env: "PROXMOX_SAFE_LOCK_DIR", def: "locks/ beside the audit log",
		docDefault: "`locks/` beside the audit log (`…/proxmox-safe-mcp/locks` by default)",
		doc:        "Directory of per-guest lock files (`flock`): every server and `call` sharing it refuse to change a guest another one is changing. Processes that share the audit log share it; give processes with different logs or of different users one shared directory if they must exclude each other.",
		help:       "directory of per-guest lock files shared by every server and call on this host, so two processes never change one guest at the same moment",
		set:        stringSetter(func(c *Config) *string { return &c.LockDir })},
	{flag: "clusters-file", env: "PROXMOX_SAFE_CLUSTERS_FILE", def: "off: one cluster from PVE_*",
		docDefault: "off: one cluster from `PVE_*`",
		doc:        "A YAML file naming several clusters, each with its URL, credentials (from files or variables), TLS and policy (docs/CLUSTERS.md). Every tool then takes a required `cluster`. The `PVE_*` connection settings are refused beside it; the `PROXMOX_SAFE_*` policy settings are each cluster's defaults. Each cluster's audit log and locks are in `clusters/<name>/` beside the audit log.",
		help:       "YAML file naming several clusters (URL, credentials from files or variables, TLS, policy); every tool then takes a required cluster",
		set:        stringSetter(func(c *Config) *string { return &c.ClustersFile })},
	{flag: "max-wait", env: "PROXMOX_SAFE_MAX_WAIT", def: proxmoxsafe.DefaultMaxWait.String(),
		docDefault: "`2m0s`",
		doc:        "Longest a mutation tool may wait for its task and the verified result (`wait: true`). A tool's `timeout_seconds` cannot exceed it (the tool schema states the limit), and a library caller's longer timeout is clamped to it. A Go duration with a unit, from `1s` to `1h` (`120s`, `5m`); anything else stops the program.",
		help:       "longest a mutation tool may wait for its task and the result (tool parameter timeout_seconds is capped to it), a duration from 1s to 1h such as 120s or 5m",
		set:        parseMaxWait},
	{flag: "log-level", env: "PROXMOX_SAFE_LOG_LEVEL", def: "info; error for tools and call",
		docDefault: "`info`; `error` for `tools`/`call`",
		doc:        "stderr log level: `debug`, `info`, `warn`, `error`. Startup warnings are shown at any level.",
		help:       "stderr log level: debug, info, warn or error",
		set: func(c *Config, v string) error {
			var l slog.Level
			if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
				return errors.New("must be one of debug, info, warn, error")
			}
			c.LogLevel, c.logLevelSet = l, true
			return nil
		}},
	{flag: "log-format", env: "PROXMOX_SAFE_LOG_FORMAT", def: "text",
		docDefault: "`text`",
		doc:        "stderr log format: `text` (`key=value`, for a person) or `json` (one JSON object per line: `time`, `level`, `msg` and the record's attributes, for a log shipper). Errors that stop the program before logging starts stay one plain line.",
		help:       "stderr log format: text or json (one JSON object per line, for log shippers)",
		set: func(c *Config, v string) error {
			switch strings.TrimSpace(v) {
			case "text":
				c.LogJSON = false
			case "json":
				c.LogJSON = true
			default:
				return errors.New("must be text or json")
			}
			return nil
		}},
	// HTTP transport (http.go).
	{flag: "http", env: "MCP_HTTP_ADDR", def: "off: stdio",
		docDefault: "off (stdio)",
		doc:        "`HOST:PORT`, `PORT` (host `127.0.0.1`) or `HOST` (port `8000`); e.g. `--http 127.0.0.1:8000`, the documented default address. `HOST` must be an IP address or `localhost`; `0.0.0.0`, `::` or an empty host (`:8000`) mean every interface.",
		help:       "serve MCP over streamable HTTP on ADDR instead of stdio: HOST:PORT, PORT (host 127.0.0.1) or HOST (port 8000), e.g. 127.0.0.1:8000; HOST is an IP address or localhost; a non-loopback address needs MCP_AUTH_TOKEN",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.Addr })},
	{flag: "transport", env: "MCP_TRANSPORT", def: "stdio; streamable-http when --http is set",
		docDefault: "`stdio`; `streamable-http` when `MCP_HTTP_ADDR` is set",
		doc:        "`stdio`, `streamable-http` (also `http`), or `sse`: the legacy HTTP+SSE transport (protocol 2024-11-05) for clients that have not moved to streamable HTTP, at `/sse` by default, behind exactly the same checks (see docs/DEPLOYMENT.md). `sse` with `MCP_STATELESS` is refused. An HTTP transport without an address listens on `127.0.0.1:8000` (or `MCP_HOST`/`MCP_PORT`). `stdio` together with an address is refused.",
		help:       "stdio, streamable-http (also: http), or sse: the legacy HTTP+SSE transport for clients that have not moved to streamable HTTP (same checks, default path /sse); the HTTP transports listen on --http",
		set:        setTransport},
	{env: "MCP_HOST", def: DefaultHTTPHost,
		docDefault: "`127.0.0.1`",
		doc:        "The host half of `MCP_HTTP_ADDR` (the port half is `MCP_PORT`), for deployments that set them apart (see *Migrating*). Used only with an HTTP `MCP_TRANSPORT`; alone they are refused rather than ignored. When `MCP_HTTP_ADDR` is set too, both must name the same address.",
		help:       "host part of MCP_HTTP_ADDR, for deployments that set host and port apart; must agree with MCP_HTTP_ADDR when both are set",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.host })},
	{env: "MCP_PORT", def: DefaultHTTPPort,
		docDefault: "`8000`",
		doc:        "The port half of `MCP_HTTP_ADDR`; see `MCP_HOST`.",
		help:       "port part of MCP_HTTP_ADDR (see MCP_HOST)",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.port })},
	{env: "MCP_IMAGE_HTTP_ADDR", def: "unset",
		docDefault: "unset",
		doc:        "For container images (ours sets `0.0.0.0:8000`): the address, and the HTTP transport, used when the deployment names none. The lowest default: `MCP_HTTP_ADDR`, `MCP_TRANSPORT` (also `stdio`), `MCP_HOST` and `MCP_PORT` override it without conflict; `MCP_HOST` or `MCP_PORT` alone take the other half from it. `healthcheck` uses it too.",
		help:       "for container images: serve streamable HTTP on this address unless the deployment's own settings (MCP_TRANSPORT, MCP_HTTP_ADDR, MCP_HOST, MCP_PORT) say otherwise; they override it without conflict, and MCP_HOST or MCP_PORT alone take the other half from it",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.imageAddr })},
	{flag: "http-path", env: "MCP_HTTP_PATH", def: defaultHTTPPath + "; /sse for sse",
		docDefault: "`/mcp`; `/sse` for `sse`",
		doc:        "Path of the MCP endpoint. `/healthz` and `/.well-known/…` are reserved. Alias: `MCP_PATH`.",
		help:       "URL path of the MCP endpoint",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.Path }),
		aliases:    []alias{sameAlias("MCP_PATH")}},
	{env: "MCP_AUTH_TOKEN", secret: true,
		docDefault: "—",
		doc:        "Bearer token clients send (`Authorization: Bearer …`); at least 32 characters of `A-Z a-z 0-9 - . _ ~ + /` (e.g. `openssl rand -hex 32`); must differ from the Proxmox secret. **Required** for a real cluster on any address, and for `--demo` off loopback.",
		help:       "bearer token HTTP clients must send (at least 32 characters, e.g. openssl rand -hex 32); deliberately no flag",
		set:        setAuthToken},
	{flag: "auth-token-file", env: "MCP_AUTH_TOKEN_FILE",
		docDefault: "—",
		doc:        "File holding the token (one trailing newline removed). Not together with `MCP_AUTH_TOKEN`.",
		help:       "file holding the bearer token; one trailing newline is removed",
		set:        stringSetter(func(c *Config) *string { return &c.HTTP.TokenFile })},
	{flag: "allowed-origins", env: "MCP_ALLOWED_ORIGINS", def: "none",
		docDefault: "none (the bound loopback origin only)",
		doc:        "Comma-separated browser origins (`https://app.example.com`, `http://localhost:6274`) that may call the endpoint; they get CORS headers and their preflights are answered before authentication. Any other `Origin`, including `null`, gets 403, except the origin of the loopback address the server is bound to (`http://127.0.0.1:8000` for `--http 127.0.0.1:8000`), which only this server's own pages could send: it serves none, or only the approval page, which runs no script (docs/DEPLOYMENT.md).",
		help:       "comma-separated browser origins (scheme://host[:port]) allowed to call the HTTP endpoint; any other Origin header gets 403",
		set:        listSetter(func(c *Config) *[]string { return &c.HTTP.AllowedOrigins })},
	{flag: "allowed-hosts", env: "MCP_ALLOWED_HOSTS", def: "the bound address",
		docDefault: "the bound address",
		doc:        "Comma-separated extra `Host` values (`name` = any port, or `name:port`), for a reverse proxy or a container port mapping. Any other `Host` gets 403.",
		help:       "comma-separated extra Host header values (name or name:port) to accept, e.g. behind a proxy or a container port mapping; any other Host gets 403",
		set:        listSetter(func(c *Config) *[]string { return &c.HTTP.AllowedHosts })},
	{flag: "stateless", env: "MCP_STATELESS", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "No sessions; GET/DELETE answer 405; no server-to-client requests.",
		help:       "HTTP without sessions: no server-to-client requests; GET and DELETE answer 405",
		set:        boolSetter(func(c *Config) *bool { return &c.HTTP.Stateless })},
	{flag: "session-timeout", env: "MCP_SESSION_TIMEOUT", def: defaultSessionTimeout,
		docDefault: "`30m`",
		doc:        "Idle sessions are closed after this; `0` never closes them.",
		help:       "close an HTTP session after this long without a request, e.g. 30m; 0 never closes idle sessions",
		set:        setSessionTimeout},
	{flag: "max-sessions", env: "MCP_MAX_SESSIONS", def: strconv.Itoa(mcphttp.DefaultMaxSessionsPerIdentity),
		docDefault: "`64`",
		doc:        "Most sessions one token may hold open; one more gets 429. `0`: no cap.",
		help:       "most HTTP sessions one token may hold open at a time (429 beyond it); 0 means no cap",
		set:        limitSetter(func(c *Config) *int { return &c.HTTP.MaxSessions })},
	{flag: "max-in-flight", env: "MCP_MAX_IN_FLIGHT", def: strconv.Itoa(mcphttp.DefaultMaxInFlight),
		docDefault: "`256`",
		doc:        "Most requests served at once (event streams excluded); beyond it 503 with `Retry-After`. `0`: no bound.",
		help:       "most HTTP requests served at once (503 with Retry-After beyond it); 0 means no bound",
		set:        limitSetter(func(c *Config) *int { return &c.HTTP.MaxInFlight })},
	{flag: "shutdown-timeout", env: "MCP_SHUTDOWN_TIMEOUT", def: DefaultShutdownTimeout.String(),
		docDefault: "`20s`",
		doc:        "On SIGTERM/SIGINT, how long calls in flight may take before they are cut off. Keep it below the supervisor's kill timeout.",
		help:       "on SIGTERM/SIGINT, how long HTTP calls in flight may take to finish before they are cut off",
		set:        setShutdownTimeout},
	{flag: "allow-unauthenticated-remote", env: "MCP_ALLOW_UNAUTHENTICATED_REMOTE", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "**Dangerous.** Serve without a token on any address, for a proxy in front that authenticates every request. Warned at every start. Origin and Host checks still apply.",
		help:       "DANGEROUS: serve HTTP without MCP_AUTH_TOKEN, on any address; only behind a proxy that authenticates every request (warned at every start)",
		set:        boolSetter(func(c *Config) *bool { return &c.HTTP.AllowUnauth })},
	{flag: "auth-server", env: "MCP_AUTH_SERVER", def: "none",
		docDefault: "—",
		doc:        "Authorization server URL announced in RFC 9728 protected resource metadata (`/.well-known/oauth-protected-resource/mcp`) and in the 401 challenge. Needs a token.",
		help:       "authorization server URL to announce in RFC 9728 protected resource metadata (/.well-known/oauth-protected-resource); needs MCP_AUTH_TOKEN",
		set:        urlSetter(func(c *Config) *string { return &c.HTTP.AuthServer })},
	{flag: "public-url", env: "MCP_PUBLIC_URL", def: "http://ADDR/PATH on loopback",
		docDefault: "`http://ADDR/PATH` on loopback",
		doc:        "The endpoint URL clients use (the RFC 9728 `resource`); required with `MCP_AUTH_SERVER` off loopback.",
		help:       "the MCP endpoint URL clients use (the RFC 9728 resource); only with MCP_AUTH_SERVER",
		set:        urlSetter(func(c *Config) *string { return &c.HTTP.PublicURL })},
	{flag: "json", boolean: true, def: "false",
		docDefault: "`false`",
		doc:        "`tools` and `doctor`: JSON on stdout instead of text.",
		help:       "tools and doctor: print JSON on stdout instead of text",
		set:        boolSetter(func(c *Config) *bool { return &c.JSON })},
	{flag: "version", boolean: true,
		docDefault: "—",
		doc:        "Prints the version: the `-ldflags \"-X main.version=…\"` value if set, else the module version (`go install …@v1.2.3`), else `(devel)`.",
		help:       "print the version and exit",
		set:        boolSetter(func(c *Config) *bool { return &c.Version })},
}, append(append(responderSettings(), configKeySettings()...), healthSettings()...)...)

// settingValue adapts a setting to flag.Value. It keeps its own error in
// *failed, so the message reaches the user without the flag package's
// wrapping (which quotes the raw value).
type settingValue struct {
	c      *Config
	s      *setting
	failed *error
}

func (v settingValue) String() string   { return "" }
func (v settingValue) IsBoolFlag() bool { return v.s.boolean }
func (v settingValue) Set(x string) error {
	if err := v.s.set(v.c, x); err != nil {
		*v.failed = fmt.Errorf("%s: %w", v.s.name(true), err)
		return *v.failed
	}
	if !v.s.secret {
		given := "--" + v.s.flag
		if !v.s.boolean || x != "true" {
			given += "=" + x
		}
		v.c.Flags = append(v.c.Flags, given)
	}
	return nil
}

// Usage prints every flag and variable with its default.
// commandUsage is each direct command's own usage (COMMAND --help).
var commandUsage = map[string]string{
	CmdTools: `Usage: proxmox-safe-mcp [flags] tools [TOOL] [--json]

Without TOOL, lists the tools this configuration exposes (profile, read-only
mode, gateway-write), each with its class and summary. With TOOL, shows its
parameters and a runnable example call. --json prints the same as JSON.
A tool the configuration hides is named with the setting that offers it.

  proxmox-safe-mcp --demo tools
  proxmox-safe-mcp --demo tools guest_power
`,
	CmdCall: `Usage: proxmox-safe-mcp [flags] call TOOL ['{json}']

Runs one tool through the same MCP code path a client uses and prints its
result on stdout (the structured result as JSON; an error's
{"error":{…}} object), the explanation on stderr. The arguments are one
JSON object ('{}' when omitted); "wait": true on a mutation waits for the
task and shows progress on stderr. In the demo each call starts its own
simulated cluster, so its state starts afresh on every call.

Exit codes: 0 success; 1 the tool returned an error (a refusal included);
2 bad usage or configuration, or a tool this configuration does not offer;
4 "wait": true and the task had not finished when the wait ended; 5
"wait": true and the task failed.

  proxmox-safe-mcp --demo call list_guests
  proxmox-safe-mcp --demo call guest_power '{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown"}'
`,
	CmdDoctor: `Usage: proxmox-safe-mcp [flags] doctor [--json]

Checks the setup with the same settings serve would use: every missing
setting, TCP reachability, TLS trust (the token is never sent to an
untrusted server), the token or login, the allowed nodes, the privileges of
every enabled tool, the approval levels and the audit log. --json prints one
JSON document instead of text.

Exit codes: 0 working; 1 a problem was found; 2 bad usage or configuration;
3 working, but the token holds dangerous privileges it does not need.

  proxmox-safe-mcp --demo doctor
`,
}

// CommandUsage writes command's own usage and reports whether it has one
// (tools, call, doctor; the grant and audit commands print their own).
func CommandUsage(w io.Writer, command string) bool {
	u, ok := commandUsage[command]
	if ok {
		fmt.Fprint(w, u)
	}
	return ok
}

func Usage(w io.Writer) {
	fmt.Fprint(w, `proxmox-safe-mcp: a safety-first MCP server for Proxmox VE.

Usage:
  proxmox-safe-mcp [flags]                       serve MCP over stdio (default; same as "serve")
  proxmox-safe-mcp [flags] --http 127.0.0.1:8000 serve MCP over streamable HTTP instead (needs MCP_AUTH_TOKEN)
  proxmox-safe-mcp healthcheck [--url URL]       probe a running HTTP server's /healthz (for containers)
  proxmox-safe-mcp audit verify|repair [FILE]    check an audit log, or remove a torn final line (see audit --help)
  proxmox-safe-mcp [flags] tools [TOOL]          list the tools this configuration exposes, or one tool's parameters
  proxmox-safe-mcp [flags] call TOOL ['{json}']  run one tool and print its result ("wait": true shows progress on stderr)
  proxmox-safe-mcp [flags] doctor                check the setup: reachability, TLS, token, nodes, privileges
  proxmox-safe-mcp approve|deny CODE             decide a grant a refused call asked for (see approve --help)
  proxmox-safe-mcp grants list                   list the grants (pending, approved, denied, used)
  proxmox-safe-mcp completion bash|zsh|fish      print a shell completion script (see completion --help)
  proxmox-safe-mcp --demo [tools|call|doctor|approve|grants ...] the same, against a simulated cluster

COMMAND --help shows one command's usage.

Every flag may also be set by the environment variable shown; a flag wins
over its variable. Booleans accept exactly true, false, 1 or 0.

Flags:
`)
	for _, s := range table {
		left := "  "
		if s.flag != "" {
			left += "--" + s.flag
			if !s.boolean {
				left += " value"
			}
		} else {
			left += "(no flag)"
		}
		env := ""
		if s.env != "" {
			names := []string{s.env}
			for _, a := range s.aliases {
				names = append(names, a.env)
			}
			env = " [" + strings.Join(names, ", ") + "]"
		}
		def := ""
		if s.def != "" {
			def = " (default " + s.def + ")"
		}
		fmt.Fprintf(w, "%s%s%s\n      %s\n", left, env, def, s.help)
	}
	fmt.Fprint(w, `  --help
      show this help

Exit codes: 0 success; 1 the tool call returned an error (call) or doctor found a problem; 2 bad usage or
configuration (also: call of a tool this configuration does not offer); 3 doctor: working, but the token
holds dangerous privileges it does not need; 4 call with "wait": true: the task had not finished (or could
not be confirmed) when the wait ended, it may still complete; 5 call with "wait": true: the task failed.
See docs/CONFIGURATION.md for details and examples.
`)
}

// parseMaxWait is strict like parseBool: a Go duration with a unit, within
// the library's bounds, so a typo ("120", "2 min") fails at startup
// instead of at the first waiting tool call.
func parseMaxWait(c *Config, v string) error {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > proxmoxsafe.MaxMaxWait {
		return fmt.Errorf("must be a duration from 1s to 1h with a unit, e.g. 120s or 5m (got %s)", sanitize.Quote(v))
	}
	c.MaxWait = d
	return nil
}
