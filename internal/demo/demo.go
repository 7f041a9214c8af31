package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// ReadmeRolePrivileges are the privileges of the role the README's quick
// start creates (proxmoxsafe.RoleName), granted on "/". A test keeps them
// equal to the README's pveum command.
var ReadmeRolePrivileges = []string{"Sys.Audit", "VM.Audit", "Datastore.Audit", "VM.PowerMgmt", "VM.Snapshot"}

// demoAgentPrivilege is the optional privilege the demo token holds
// beyond the README's role, so that guest_addresses and guest_agent_info
// show what a VM's guest agent reports (a real setup adds it with the
// optional role permissions_check suggests, or leaves agent data out).
const demoAgentPrivilege = "VM.GuestAgent.Audit"

// taskDuration is how long a demo task runs when nobody polls it.
const taskDuration = 3 * time.Second

// haDelay is how long the demo's HA manager takes to carry out a start or
// stop (a real one takes seconds to tens of seconds).
const haDelay = 1500 * time.Millisecond

// Start starts the simulated cluster and returns a library config that
// talks to it over real TLS, pinned by fingerprint, with the fake's token,
// and what must be closed on exit (also when it fails: close them then
// too). It reads no PVE_* variable: demo mode must never reach a real
// cluster. It fills in cfg's temporary audit log and grant directory, and
// tells the user on stderr what runs (version is the binary's).
func Start(cfg *settings.Config, version string, stderr io.Writer) (lib proxmoxsafe.Config, closers []func(), err error) {
	cluster := proxmoxtest.DemoCluster()
	// One finding of each kind for health_report: an offline pve4, Ceph
	// warning, an HA resource in error, a nearly full storage.
	proxmoxtest.SeedHealthFindings(cluster)
	// The demo token holds what the README's quick start grants, not an
	// administrator's privileges: `--demo doctor` then shows a clean
	// least-privilege setup, and the demo behaves like a recommended one.
	cluster.Tokens = map[string]*proxmoxtest.Token{proxmoxtest.DefaultTokenID: {
		Secret: proxmoxtest.DefaultTokenSecret,
		// The agent privilege on /vms only, where the agent reads use it:
		// held on / it would be more than they need (a dangerous privilege
		// doctor and permissions_check flag held beyond its paths).
		Privileges: map[string][]string{"/": privileges(cfg), "/vms": {demoAgentPrivilege},
			// node_health's optional Sys.Modify on pve1 only: its pending
			// updates show, and pve2 and pve3 show what a token without it
			// gets ("not permitted").
			"/nodes/pve1": {"Sys.Modify"}},
	}}
	// Metrics history: the cluster was upgraded from PVE 8 three weeks
	// ago, so a month or a year of history shows the old file's coarser
	// rows before the new ones (docs/METRICS.md).
	cluster.RRD = &proxmoxtest.RRD{UpgradedAt: time.Now().Add(-21 * 24 * time.Hour).Unix()}
	// Read the model before NewServer takes ownership of it. The offline
	// node is no allowlisted one (doctor would fail it); the cluster
	// status and the health report still show it.
	var nodes []string
	for _, n := range cluster.Nodes {
		if !n.Online {
			continue
		}
		nodes = append(nodes, n.Name)
	}
	example := examplePhrase(cluster)
	guests := len(cluster.Guests)

	srv := proxmoxtest.NewUnstartedServer(cluster)
	// Real tasks end on their own; without this a demo task would run until
	// someone polled it, and block the next action on that guest.
	srv.TaskDuration = taskDuration
	// An HA-managed guest starts or stops when its LRM gets to it, some
	// time after the request, however often the status is read.
	srv.HADelay = haDelay
	// Nothing reads the fake's request log here; unbounded, it grew by
	// about 2 KiB per tool call (bench/soak).
	srv.RequestLogLimit = 100
	// The backup jobs' last runs, for backup_jobs.
	srv.AddDemoBackupRuns()
	srv.StartTLS()
	closers = append(closers, srv.Close)

	if cfg.AuditLog == "" && !settings.SendsNoMutation(cfg.Command) {
		f, err := os.CreateTemp("", "proxmox-safe-mcp-demo-audit-*.jsonl")
		if err != nil {
			return proxmoxsafe.Config{}, closers, settings.Errorf("--demo: creating a temporary audit log: %v", err)
		}
		f.Close()
		cfg.AuditLog = f.Name()
		name := f.Name()
		closers = append(closers, func() {
			// One-shot calls clean up after themselves (pass --audit-log to
			// keep one); serve keeps a log that recorded something.
			if b, err := os.ReadFile(name); cfg.Command == settings.CmdCall || (err == nil && bytes.Count(b, []byte("\n")) <= 1) {
				os.Remove(name) // a log with only its anchor recorded nothing
				os.Remove(name + ".seal")
				os.Remove(name + ".key")
			}
		})
	}

	classes := cfg.Classes()
	if cfg.ReadOnly {
		classes = nil
	}
	if cfg.GrantDir == "" && cfg.ElicitKeyFile != "" {
		// The used nonces must last as long as the key, or an answered
		// elicitation could be answered again after a restart.
		return proxmoxsafe.Config{}, closers, settings.Errorf("%s: in the demo it needs PROXMOX_SAFE_GRANT_DIR (--grant-dir), where the used elicitation nonces are kept across restarts", settings.ElicitKeySetting)
	}
	if cfg.GrantDir == "" && cfg.UsesLevel(classes, proxmoxsafe.LevelGrant) && cfg.DemoGrantDir != "" {
		// The demo's own directory in the state directory: a grant a
		// one-shot call asked for must outlive the call, so that
		// `--demo approve CODE` finds it and the repeated call uses it.
		cfg.GrantDir = cfg.DemoGrantDir
	}
	if cfg.GrantDir == "" && cfg.UsesLevel(classes, proxmoxsafe.LevelGrant) {
		// Without a state directory, a private directory for this run: the
		// demo's grants must never sit where a real server's are (a grant
		// is bound to a target, and pve1/qemu/100 may exist for real). The
		// banner and every refusal name it.
		dir, err := os.MkdirTemp("", "proxmox-safe-mcp-demo-grants-*")
		if err != nil {
			return proxmoxsafe.Config{}, closers, settings.Errorf("--demo: creating a temporary grant directory: %v", err)
		}
		cfg.GrantDir = dir
		closers = append(closers, func() { os.RemoveAll(dir) })
	}
	if cfg.Command == settings.CmdServe && cfg.HTTP.Addr == "" { // HTTP prints its own line (the binary's HTTP serving)
		printBanner(stderr, version, srv.URL, nodes, guests, cfg, classes, example)
	} else {
		audit := ""
		if cfg.Command == settings.CmdCall {
			// Each call starts its own cluster: a guest stopped by one call
			// runs again in the next, which surprises a newcomer.
			audit = "; its state starts afresh on every call (a guest one call stopped runs again in the next)"
			audit += "; audit log " + cfg.AuditLog
			if !strings.Contains(cfg.AuditLog, "proxmox-safe-mcp-demo-audit-") {
				audit += " (kept)"
			} else {
				audit += " (removed on exit; pass --audit-log to keep one)"
			}
		}
		fmt.Fprintf(stderr, "proxmox-safe-mcp: demo mode: simulated cluster (nodes %s), nothing real is touched%s\n", settings.DescribeNodes(nodes), audit)
	}
	return proxmoxsafe.Config{
		URL: srv.URL,
		// Approvals are bound to the cluster's address, and each run starts
		// the fake on a new port: a grant a one-shot call asked for must
		// serve the repeated call, which runs a fake of its own. The demo
		// cluster is the same on every run, so it has one name.
		ClusterURL:  ClusterURL,
		TokenID:     proxmoxtest.DefaultTokenID,
		TokenSecret: proxmoxtest.DefaultTokenSecret,
		Fingerprint: srv.Fingerprint(),
		Policy:      proxmoxsafe.Policy{AllowedNodes: nodes},
	}, closers, nil
}

// ClusterURL names the demo's simulated cluster in approvals and audit
// records (proxmoxsafe.Config.ClusterURL). The .invalid top-level domain
// never resolves: the name cannot be a real cluster's.
const ClusterURL = "https://pve-demo.invalid:8006"

// examplePhrase returns an approval phrase for a running, unlocked,
// non-template guest, to show in the banner.
func examplePhrase(c *proxmoxtest.Cluster) string {
	for _, g := range c.Guests {
		if g.Status == "running" && g.Lock == "" && !g.Template && !g.HAManaged {
			return proxmoxsafe.ApprovalPhrase("shutdown", proxmoxsafe.Target{
				Node: g.Node, Type: proxmoxsafe.GuestType(g.Type), VMID: g.VMID,
			})
		}
	}
	return "APPROVE shutdown <node>/<type>/<vmid>"
}

// printBanner tells a newcomer what is running and how to connect a
// client. It goes to stderr: stdout is the MCP channel.
func printBanner(w io.Writer, version, url string, nodes []string, guests int, cfg *settings.Config, classes []proxmoxsafe.Class, example string) {
	command, args := clientCommand(cfg.Flags)
	cmdJSON, _ := json.Marshal(command)
	argsJSON, _ := json.Marshal(args)
	claude := fmt.Sprintf(`    {"mcpServers": {"proxmox-safe-demo": {"command": %s, "args": %s}}}`, cmdJSON, argsJSON)
	vscode := fmt.Sprintf(`    {"servers": {"proxmox-safe-demo": {"type": "stdio", "command": %s, "args": %s}}}`, cmdJSON, argsJSON)
	fmt.Fprintf(w, `proxmox-safe-mcp %s — DEMO MODE
  A simulated Proxmox VE cluster runs inside this process at %s
  (nodes: %s; %d guests). Nothing touches a real Proxmox server, and every
  PVE_* environment variable is ignored.
  Profile %s (mutation classes: %s), read-only %t, allowed nodes: %s.
  Audit log: %s
%s
  MCP JSON-RPC is now served on stdin/stdout; press Ctrl-C to stop.
  To use it from Claude Desktop (claude_desktop_config.json):
%s
  From VS Code (.vscode/mcp.json):
%s
  From Claude Code:
    %s
  From a shell, without a client:
    proxmox-safe-mcp --demo tools
    proxmox-safe-mcp --demo call list_guests
`, version, url, settings.DescribeNodes(nodes), guests,
		cfg.Profile, settings.ClassNames(classes), cfg.ReadOnly, settings.DescribeNodes(nodes),
		cfg.AuditLog, approvals(cfg, classes, example), claude, vscode, claudeAdd(command, args))
}

// approvals says how each enabled class is approved (the levels in
// force, with --approvals), with what each level asks of the user; one
// line each, indented like the banner.
func approvals(cfg *settings.Config, classes []proxmoxsafe.Class, example string) string {
	if len(classes) == 0 {
		return "  No mutation class is enabled: only read tools are offered.\n"
	}
	var b strings.Builder
	b.WriteString("  Approval per class (levels in order; --approvals changes them):\n")
	used := map[proxmoxsafe.ApprovalLevel]bool{}
	for _, cl := range classes {
		levels := cfg.EffectiveLevels(cl)
		if cl != proxmoxsafe.ClassGateway {
			for _, l := range levels {
				used[l] = true
			}
		}
		fmt.Fprintf(&b, "    %-15s %s\n", cl, settings.LevelsText(cl, levels, ", "))
	}
	if used[proxmoxsafe.LevelPhrase] {
		fmt.Fprintf(&b, "  phrase: pass the exact approval phrase, e.g. %q.\n", example)
	}
	if used[proxmoxsafe.LevelElicit] {
		b.WriteString("  elicit: your MCP client shows the plan and asks you to type the VMID.\n")
	}
	if used[proxmoxsafe.LevelGrant] {
		fmt.Fprintf(&b, "  grant: approve the code a refusal gives from another shell:\n    %s CODE\n", ApproveCommand(cfg))
	}
	if used[proxmoxsafe.LevelNone] {
		b.WriteString("  none: no approval; the class's own guards and the audit log are the safety.\n")
	}
	return b.String()
}

// ApproveCommand is the command that approves one of this demo's grants
// (the code follows it): `proxmox-safe-mcp --demo approve` for the demo's
// own directory, else the directory named for plain approve, since a
// --grant-dir flag or a temporary directory is not where approve looks.
func ApproveCommand(cfg *settings.Config) string {
	if cfg.GrantDir == cfg.DemoGrantDir {
		return "proxmox-safe-mcp --demo approve"
	}
	return "PROXMOX_SAFE_GRANT_DIR=" + shellQuote(cfg.GrantDir) + " proxmox-safe-mcp approve"
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters paths and flags are usually made of.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// claudeAdd is the `claude mcp add` line that starts the same demo over
// stdio; arguments are shell-quoted where they need it.
func claudeAdd(command string, args []string) string {
	words := []string{"claude", "mcp", "add", "proxmox-safe-demo", "--", shellQuote(command)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// clientCommand returns how a client should start this demo: the binary's
// absolute path, or `go run` from the module root when running under
// `go run` (whose binary lives in a temporary directory).
func clientCommand(flags []string) (string, []string) {
	// The flags the demo was started with (a profile, approval levels),
	// so the client starts the same demo; --demo once, first.
	demoArgs := []string{"--demo"}
	for _, f := range flags {
		if f != "--demo" {
			demoArgs = append(demoArgs, f)
		}
	}
	exe, err := os.Executable()
	if err == nil && !strings.Contains(exe, "go-build") {
		if abs, err := filepath.Abs(exe); err == nil {
			return abs, demoArgs
		}
	}
	dir, _ := os.Getwd()
	// go run is usually started from the module root, but find it anyway.
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cmd", "proxmox-safe-mcp")); err == nil {
			dir = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "go", append([]string{"-C", dir, "run", "./cmd/proxmox-safe-mcp"}, demoArgs...)
}

// privileges are the README role's privileges plus the ones the
// profile's other classes cannot work without (the admin profile's
// destroy needs VM.Allocate, which the README's role leaves out on
// purpose), so each profile's demo behaves like a setup granted what
// doctor asks for.
func privileges(cfg *settings.Config) []string {
	out := slices.Clone(ReadmeRolePrivileges)
	classes := cfg.Classes()
	for _, r := range proxmoxsafe.Requirements() {
		if r.Class != "" && !r.Optional && slices.Contains(classes, r.Class) && !slices.Contains(out, r.Privilege) {
			out = append(out, r.Privilege)
		}
	}
	return out
}
