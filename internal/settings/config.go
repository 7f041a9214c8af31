package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Commands the binary understands; serve is the default.
const (
	CmdServe = "serve"
	CmdTools = "tools"
	CmdCall  = "call"
)

// maxSecretFileBytes bounds PVE_API_TOKEN_SECRET_FILE. A token secret is a
// UUID; anything much larger is the wrong file.
const maxSecretFileBytes = 4096

// secret holds the token secret. Its String, GoString and LogValue methods
// never show the value, so an accidental %v, %#v or slog attribute cannot
// leak it; only reveal returns it.
type Secret struct{ v string }

func (s Secret) String() string             { return "[redacted]" }
func (s Secret) GoString() string           { return "[redacted]" }
func (s Secret) LogValue() slog.Value       { return slog.StringValue("[redacted]") }
func (s Secret) Reveal() string             { return s.v }
func (s Secret) Empty() bool                { return s.v == "" }
func (s Secret) Format(f fmt.State, _ rune) { io.WriteString(f, "[redacted]") }

// NewSecret holds v as a secret.
func NewSecret(v string) Secret { return Secret{v} }

// config is the binary's configuration after flags and environment are
// merged. Nothing in it has been checked against Proxmox yet.
type Config struct {
	Command  string
	Tool     string // call: the tool name
	ToolArgs string // call: JSON object, "{}" when omitted

	Help    bool
	Version bool
	Demo    bool
	JSON    bool // tools, doctor: JSON on stdout

	URL               string
	TokenID           string
	TokenSecret       Secret
	SecretFrom        string // the variable or flag the secret came from
	TokenSecretFile   string
	Username          string // password (ticket) authentication: auth.go
	Password          Secret
	PasswordFrom      string // the variable the password came from
	PasswordFile      string
	Realm             string
	CAFile            string
	Fingerprint       string
	TLSInsecure       bool
	AllowInsecureHTTP bool
	AllowedNodes      []string
	Profile           string
	ReadOnly          bool
	GatewayWrite      bool // adds the gateway-write class to the profile's classes
	AuditLog          string
	AuditKeyFile      string                                            // "": the log's path + ".key" (state.go)
	AuditSyslog       string                                            // "": no syslog copy
	LockDir           string                                            // "": <state dir>/locks (state.go)
	AuditDefault      bool                                              // AuditLog is the default path, not a setting
	Approvals         map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel // approvals.go
	GrantDir          string                                            // "": beside the audit log (cmd: approve.go)
	DemoGrantDir      string                                            // --demo: DemoGrantDir, "" when there is no state directory (state.go)
	ApprovalPage      ApprovalPageConfig                                // HTTP mode's approval page (approvalpage.go)
	ElicitKeyFile     string                                            // "": elicit.key beside the audit log when used (state.go)
	MaxWait           time.Duration                                     // 0: the library's default cap
	Health            proxmoxsafe.HealthThresholds                      // health_report's thresholds (health.go)
	LogLevel          slog.Level
	logLevelSet       bool
	LogJSON           bool // --log-format json: one JSON object per log line
	// Flags are the flags given, in order, as --name=value (a true
	// boolean as --name), without the values of secret settings: what
	// the demo's banner repeats in the client configuration it shows.
	Flags      []string
	HTTP       HTTPConfig    // --http and MCP_* (http.go)
	Protect    ProtectConfig // protected guests, uptime, retention (protect.go)
	ConfigKeys []string      // nil: the library's default (proxmoxsafe/guest_config_keys.go)
	// MetricsAddr is where Prometheus metrics are served; "" is off.
	MetricsAddr string
	// Selection hides tools the policy offers (--toolsets, --tools,
	// --exclude-toolsets, --exclude-tools).
	Selection mcpserver.Selection

	// ClustersFile is PROXMOX_SAFE_CLUSTERS_FILE; Clusters are its
	// clusters, each a Config of its own (clusters.go), nil without it.
	// ClusterName is a cluster's name in such a Config.
	ClustersFile string
	Clusters     []*Config
	ClusterName  string

	// Warnings are logged once the logger exists.
	Warnings []string
	// CredentialsDir is systemd's $CREDENTIALS_DIRECTORY, or "".
	CredentialsDir string
	// setFrom maps a setting's own variable to the alias that supplied
	// its value, for messages that name what the user wrote (see source).
	setFrom map[string]string
}

// Error is a startup error: one line, exit code 2.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func Errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// ErrHelp asks for the usage text on stdout and exit code 0.
var ErrHelp = errors.New("help requested")

// parseConfig merges args and the environment (read through lookup, so tests
// need no os.Setenv) into a config and checks it. Flags win over the
// environment; an empty environment variable counts as unset. Flags may come
// before or after the command.
func Parse(args []string, lookup func(string) (string, bool)) (*Config, error) {
	c := &Config{Profile: string(proxmoxsafe.ProfileSafe), ToolArgs: "{}"}
	fs := flag.NewFlagSet("proxmox-safe-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var setErr error
	for _, s := range table {
		if s.flag != "" {
			fs.Var(settingValue{c, s, &setErr}, s.flag, s.help)
		}
	}

	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			switch {
			case errors.Is(err, flag.ErrHelp):
				if len(pos) > 0 { // COMMAND --help: that command's usage
					c.Command = pos[0]
				}
				return c, ErrHelp
			case setErr != nil:
				return nil, Errorf("%v", setErr)
			}
			return nil, Errorf("%s", FlagError(err))
		}
		after := fs.Args()
		if len(after) == 0 {
			break
		}
		if i := len(rest) - len(after); i > 0 && rest[i-1] == "--" {
			pos = append(pos, after...)
			break
		}
		pos = append(pos, after[0])
		rest = after[1:]
	}
	if c.Version {
		return c, nil
	}

	if err := parseCommand(c, pos); err != nil {
		if errors.Is(err, ErrHelp) {
			return c, err
		}
		return nil, err
	}

	fromFlag := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { fromFlag[f.Name] = true })
	for _, s := range table {
		if c.Demo && s.flag != "" && fromFlag[s.flag] && strings.HasPrefix(s.env, "PVE_") {
			return nil, Errorf("%s cannot be combined with --demo, which connects to its own simulated cluster", s.name(true))
		}
	}
	for _, s := range table {
		if s.env == "" || (s.flag != "" && fromFlag[s.flag]) {
			continue
		}
		if c.Demo && strings.HasPrefix(s.env, "PVE_") {
			continue // demo mode never reads PVE_*: it must not touch a real cluster.
		}
		found, ok, err := s.lookupEnv(lookup)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if err := s.set(c, found.v); err != nil {
			if found.name != s.env {
				return nil, Errorf("%s (alias of %s): %v", found.name, s.name(false), err)
			}
			return nil, Errorf("%s: %v", s.name(false), err)
		}
		if found.name != s.env {
			if c.setFrom == nil {
				c.setFrom = map[string]string{}
			}
			c.setFrom[s.env] = found.name
		}
	}
	// --token-secret-file on the command line beats PVE_API_TOKEN_SECRET too,
	// and --password-file beats PVE_PASSWORD.
	if fromFlag["token-secret-file"] {
		c.TokenSecret, c.SecretFrom = Secret{}, ""
	}
	if fromFlag["password-file"] {
		c.Password, c.PasswordFrom = Secret{}, ""
	}
	if !c.logLevelSet && c.Command != CmdServe {
		// The result already says what happened; per-operation lines
		// (including the library's WARN for refusals) would repeat it.
		c.LogLevel = slog.LevelError
	}
	defaultStatePaths(c, lookup) // state.go
	c.CredentialsDir, _ = lookup("CREDENTIALS_DIRECTORY")
	if err := c.checkLooseKeyFiles(); err != nil { // secretfile.go
		return c, err
	}
	if c.ClustersFile != "" {
		if err := c.checkClustersAlone(); err != nil {
			return c, err
		}
		clusters, err := c.loadClusters(lookup) // clusters.go
		if err != nil {
			return c, err
		}
		c.Clusters = clusters
	} else if err := checkConfig(c); err != nil {
		return c, err
	}
	if err := checkHTTPConfig(c); err != nil { // after checkConfig, which reads the Proxmox secret file
		return c, err
	}
	return c, checkApprovalPage(c) // approvalpage.go; after checkHTTPConfig, which reads the MCP token
}

// FlagError rewrites the flag package's messages into our one-line form.
func FlagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag --" + strings.TrimLeft(name, "-") + " (see --help)"
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "flag --" + strings.TrimLeft(name, "-") + " needs a value"
	}
	return msg
}

func parseCommand(c *Config, pos []string) error {
	if len(pos) == 0 {
		c.Command = CmdServe
		return nil
	}
	c.Command = pos[0]
	switch c.Command {
	case "help":
		return ErrHelp
	case CmdServe, CmdDoctor:
		if len(pos) > 1 {
			return Errorf("%s takes no arguments (got %s)", c.Command, sanitize.Quote(pos[1]))
		}
	case CmdTools:
		if len(pos) > 2 {
			return Errorf("tools takes at most one tool name (got %d arguments)", len(pos)-1)
		}
		if len(pos) == 2 {
			c.Tool = pos[1]
		}
	case CmdCall:
		if len(pos) < 2 || pos[1] == "" {
			return Errorf("call needs a tool name: proxmox-safe-mcp call TOOL ['{\"json\":\"arguments\"}']")
		}
		if len(pos) > 3 {
			return Errorf("call takes a tool name and at most one JSON argument (got %d arguments)", len(pos)-1)
		}
		c.Tool = pos[1]
		if len(pos) == 3 {
			c.ToolArgs = pos[2]
		}
	default:
		return Errorf("unknown command %s (known: serve, tools, call, doctor, approve, deny, grants, healthcheck, audit, completion)", sanitize.Quote(c.Command))
	}
	return nil
}

// mutating reports whether the effective policy enables any mutation class.
func (c *Config) Mutating() bool {
	return len(c.Classes()) > 0 && !c.ReadOnly
}

// classes are the profile's classes, plus gateway-write when asked for.
func (c *Config) Classes() []proxmoxsafe.Class {
	classes, _ := profileOf(c.Profile).Classes()
	if c.GatewayWrite {
		classes = append(classes, proxmoxsafe.ClassGatewayWrite)
	}
	return classes
}

// checkConfig reports the first problem, naming the variable to fix. It reads
// the secret file (and nothing else) so that a bad file fails at startup.
func checkConfig(c *Config) error {
	if c.Demo {
		return nil
	}
	if c.URL == "" {
		return Errorf("%s", msgURLRequired)
	}
	if strings.HasPrefix(strings.ToLower(c.URL), "http://") && !c.AllowInsecureHTTP {
		return Errorf("PVE_URL (--url) uses plain http://, which would send the credentials in clear text: use https:// (Proxmox serves the API on port 8006), or set PVE_ALLOW_INSECURE_HTTP=true (--allow-insecure-http) if the network is trusted")
	}
	switch {
	case c.usesToken() && c.usesPassword():
		return Errorf("set either an API token (PVE_API_TOKEN_ID and PVE_API_TOKEN_SECRET, recommended) or a user and password (PVE_USERNAME and PVE_PASSWORD), not both")
	case c.usesPassword():
		if err := checkPasswordConfig(c); err != nil { // auth.go
			return err
		}
		return CheckRest(c)
	}
	if c.TokenID == "" {
		return Errorf("%s", msgTokenIDRequired)
	}
	if err := checkTokenID(c.TokenID); err != nil { // tokenid.go
		return err
	}
	switch {
	case c.TokenSecretFile != "" && !c.TokenSecret.Empty():
		return Errorf("set only one of PVE_API_TOKEN_SECRET and PVE_API_TOKEN_SECRET_FILE (--token-secret-file)")
	case c.TokenSecretFile != "":
		const name = "PVE_API_TOKEN_SECRET_FILE (--token-secret-file)"
		v, err := c.readSecretFile(name, c.TokenSecretFile) // secretfile.go
		if err != nil {
			return Errorf("%s: %v", name, err)
		}
		c.TokenSecret, c.SecretFrom = Secret{v}, "PVE_API_TOKEN_SECRET_FILE"
	case c.TokenSecret.Empty():
		return Errorf("%s", msgSecretRequired)
	}
	if strings.ContainsAny(c.TokenSecret.Reveal(), " \t\r\n\v\f") {
		return Errorf("%s: the token secret contains white space (value not shown)", c.SecretFrom)
	}
	return CheckRest(c)
}

// CheckRest checks what does not depend on the authentication method
// (doctor asks it what serve would say).
func CheckRest(c *Config) error {
	if c.TLSInsecure && (c.Fingerprint != "" || c.CAFile != "") {
		return Errorf("PVE_TLS_INSECURE (--tls-insecure) cannot be combined with PVE_TLS_FINGERPRINT or PVE_CA_FILE: pinning or a CA already handles self-signed certificates")
	}
	if !SendsNoMutation(c.Command) && c.Mutating() && c.AuditLog == "" && !c.Demo {
		return Errorf("PROXMOX_SAFE_AUDIT_LOG (--audit-log) is required when the %s profile enables mutations, and there is no default because neither XDG_STATE_HOME nor HOME is set; set it to a file path, or run with PROXMOX_SAFE_READ_ONLY=true (--read-only)", sanitize.Quote(c.Profile))
	}
	return nil
}

// CmdDoctor checks a setup and prints a report.
const CmdDoctor = "doctor"

// SendsNoMutation reports whether a command can never run a mutation, so
// it needs no audit log and gets a sink that refuses every record.
func SendsNoMutation(command string) bool { return command == CmdTools || command == CmdDoctor }
