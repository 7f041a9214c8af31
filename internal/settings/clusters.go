package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/keyfile"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// The clusters file (PROXMOX_SAFE_CLUSTERS_FILE) names the clusters one
// server serves, each with its URL, credentials, TLS and policy
// (docs/CLUSTERS.md). It is YAML, decoded strictly (an unknown key, a
// repeated key or a second document is an error, so a typo never silently
// means a default), and each cluster becomes a Config of its own: the
// settings it names are set through the same table entries as the
// environment's (so a value means in the file what it means in a
// variable), on a copy of the process's Config (which keeps what is not
// per cluster: the audit key, the HTTP transport, the log).
//
// Why YAML and go.yaml.in/yaml/v3: operators of Go infrastructure know it
// (Kubernetes, Prometheus, Docker Compose, Ansible, which many Proxmox
// operators use), and go.yaml.in/yaml/v3 is the YAML organisation's
// maintained continuation of gopkg.in/yaml.v3 (the parser most Go tools
// use), with strict decoding (KnownFields). YAML 1.2's core schema as v3
// reads it does not turn `no` into false. Weighed: TOML
// (github.com/BurntSushi/toml, pelletier/go-toml/v2: also well kept,
// fewer pitfalls, less known among these operators), JSON (no comments,
// which a file of credentials' whereabouts needs), our own key=value
// format (a parser to write and keep). Cost: see docs/CLUSTERS.md; the
// package is linked into the binary but its code runs only when a
// clusters file is given.

// MaxClusters bounds the clusters one file may name.
const MaxClusters = 64

// maxClustersFileBytes bounds the file read.
const maxClustersFileBytes = 1 << 20

// ClustersSetting names the setting in messages.
const ClustersSetting = "PROXMOX_SAFE_CLUSTERS_FILE (--clusters-file)"

// clusterEntry is one cluster of the file.
type clusterEntry struct {
	Name string `yaml:"name"`
	URL  string `yaml:"url"`
	// Credentials: a token (token_id and its secret from a file or a
	// variable) or a user and password (from a file or a variable).
	// token_secret and password inline are accepted with a warning.
	TokenID         string `yaml:"token_id"`
	TokenSecretFile string `yaml:"token_secret_file"`
	TokenSecretEnv  string `yaml:"token_secret_env"`
	TokenSecret     string `yaml:"token_secret"`
	Username        string `yaml:"username"`
	PasswordFile    string `yaml:"password_file"`
	PasswordEnv     string `yaml:"password_env"`
	Password        string `yaml:"password"`
	Realm           string `yaml:"realm"`
	// TLS.
	CAFile            string `yaml:"ca_file"`
	TLSFingerprint    string `yaml:"tls_fingerprint"`
	TLSInsecure       *bool  `yaml:"tls_insecure"`
	AllowInsecureHTTP *bool  `yaml:"allow_insecure_http"`
	// Policy.
	Profile      string   `yaml:"profile"`
	GatewayWrite *bool    `yaml:"gateway_write"`
	ReadOnly     *bool    `yaml:"read_only"`
	AllowedNodes []string `yaml:"allowed_nodes"`
	Protected    []string `yaml:"protected"`
	Approvals    []string `yaml:"approvals"` // CLASS=LEVEL[,LEVEL…] each
	MaxWait      string   `yaml:"max_wait"`
	MinUptime    string   `yaml:"min_uptime"`
	ConfigKeys   []string `yaml:"config_keys"`
}

type clustersFile struct {
	Clusters []clusterEntry `yaml:"clusters"`
}

// loadClusters reads the clusters file and returns one Config per cluster,
// each checked as the environment's Config is (checkConfig).
func (c *Config) loadClusters(lookup func(string) (string, bool)) ([]*Config, error) {
	path := c.ClustersFile
	f, st, err := keyfile.OpenRegular(path)
	if err != nil {
		return nil, Errorf("%s: %v", ClustersSetting, keyfile.PathError(err))
	}
	defer f.Close()
	if st.Mode().Perm()&0o044 != 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: %s is readable by its group or others (mode %04o): it says where the credentials are; chmod 600 it",
			ClustersSetting, path, st.Mode().Perm()))
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxClustersFileBytes+1))
	if err != nil {
		return nil, Errorf("%s: %v", ClustersSetting, keyfile.PathError(err))
	}
	if len(raw) > maxClustersFileBytes {
		return nil, Errorf("%s: %s is larger than %d bytes", ClustersSetting, path, maxClustersFileBytes)
	}
	var file clustersFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errorf("%s: %s is empty; it must name at least one cluster under clusters:", ClustersSetting, path)
		}
		return nil, Errorf("%s: %s: %s", ClustersSetting, path, oneLine(err.Error()))
	}
	var extra any
	if dec.Decode(&extra) != io.EOF {
		return nil, Errorf("%s: %s holds more than one YAML document", ClustersSetting, path)
	}
	switch {
	case len(file.Clusters) == 0:
		return nil, Errorf("%s: %s names no cluster (clusters: is empty or missing)", ClustersSetting, path)
	case len(file.Clusters) > MaxClusters:
		return nil, Errorf("%s: %s names %d clusters, more than %d", ClustersSetting, path, len(file.Clusters), MaxClusters)
	}
	seen := map[string]bool{}
	var out []*Config
	for i, e := range file.Clusters {
		where := fmt.Sprintf("%s: cluster %d", ClustersSetting, i+1)
		if e.Name != "" {
			where = fmt.Sprintf("%s: cluster %s", ClustersSetting, sanitize.Quote(e.Name))
		}
		if !proxmoxsafe.ValidClusterName(e.Name) {
			return nil, Errorf("%s: name must be a lower-case DNS label of at most 32 characters (letters, digits, '-'), e.g. lab or prod-eu", where)
		}
		if seen[e.Name] {
			return nil, Errorf("%s: the name is used twice", where)
		}
		seen[e.Name] = true
		cc, err := c.clusterConfig(e, lookup)
		if err != nil {
			return nil, Errorf("%s: %v", where, err)
		}
		out = append(out, cc)
	}
	return out, nil
}

// oneLine joins a multi-line parser message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clusterConfig is c for the cluster e: its settings set through the
// table, its own state paths, then checked as the environment's would be.
func (c *Config) clusterConfig(e clusterEntry, lookup func(string) (string, bool)) (*Config, error) {
	d := *c
	d.ClustersFile, d.Clusters, d.ClusterName = "", nil, e.Name
	d.URL, d.TokenID, d.TokenSecret, d.SecretFrom, d.TokenSecretFile = "", "", Secret{}, "", ""
	d.Username, d.Password, d.PasswordFrom, d.PasswordFile, d.Realm = "", Secret{}, "", "", ""
	d.CAFile, d.Fingerprint, d.TLSInsecure, d.AllowInsecureHTTP = "", "", false, false
	d.AllowedNodes = nil
	// The process's policy settings are every cluster's defaults; the
	// file's keys replace them. Copied, so that
	// no cluster's setting changes another's.
	d.Approvals = maps.Clone(c.Approvals)
	d.Protect.ProtectedIDs = slices.Clone(c.Protect.ProtectedIDs)
	d.Protect.ProtectedNames = slices.Clone(c.Protect.ProtectedNames)
	d.Protect.ProtectedTags = slices.Clone(c.Protect.ProtectedTags)
	d.Protect.ProtectedPools = slices.Clone(c.Protect.ProtectedPools)
	d.ConfigKeys = slices.Clone(c.ConfigKeys)
	d.Warnings, d.setFrom = nil, nil
	set := func(env, v string) error {
		for i := range table {
			if table[i].env == env {
				if err := table[i].set(&d, v); err != nil {
					return fmt.Errorf("%s: %v", yamlKey(env), err)
				}
				return nil
			}
		}
		return fmt.Errorf("no setting %s", env) // a programmer error
	}
	flag := func(p *bool) string {
		if p == nil {
			return ""
		}
		return strconv.FormatBool(*p)
	}
	if e.TokenSecret != "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("clusters file, cluster %s: token_secret is written inline in %s, a file that may be copied or committed; use token_secret_file or token_secret_env", e.Name, c.ClustersFile))
	}
	if e.Password != "" {
		c.Warnings = append(c.Warnings, fmt.Sprintf("clusters file, cluster %s: password is written inline in %s, a file that may be copied or committed; use password_file or password_env", e.Name, c.ClustersFile))
	}
	secret, secretFrom, err := fromEnv(e.TokenSecretEnv, "token_secret_env", lookup)
	if err != nil {
		return nil, err
	}
	password, passwordFrom, err := fromEnv(e.PasswordEnv, "password_env", lookup)
	if err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{
		{"PVE_URL", e.URL}, {"PVE_API_TOKEN_ID", e.TokenID}, {"PVE_API_TOKEN_SECRET_FILE", e.TokenSecretFile},
		{"PVE_API_TOKEN_SECRET", e.TokenSecret}, {"PVE_USERNAME", e.Username}, {"PVE_PASSWORD_FILE", e.PasswordFile},
		{"PVE_PASSWORD", e.Password}, {"PVE_REALM", e.Realm}, {"PVE_CA_FILE", e.CAFile},
		{"PVE_TLS_FINGERPRINT", e.TLSFingerprint}, {"PVE_TLS_INSECURE", flag(e.TLSInsecure)},
		{"PVE_ALLOW_INSECURE_HTTP", flag(e.AllowInsecureHTTP)},
		{"PVE_ALLOWED_NODES", strings.Join(e.AllowedNodes, ",")}, {"PROXMOX_SAFE_PROFILE", e.Profile},
		{"PROXMOX_SAFE_GATEWAY_WRITE", flag(e.GatewayWrite)}, {"PROXMOX_SAFE_READ_ONLY", flag(e.ReadOnly)},
		{"PROXMOX_SAFE_PROTECTED", strings.Join(e.Protected, ",")}, {"PROXMOX_SAFE_APPROVALS", strings.Join(e.Approvals, ";")},
		{"PROXMOX_SAFE_MAX_WAIT", e.MaxWait}, {"PROXMOX_SAFE_MIN_UPTIME", e.MinUptime},
		{"PROXMOX_SAFE_CONFIG_KEYS", strings.Join(e.ConfigKeys, ",")},
	} {
		if kv[1] == "" {
			continue
		}
		if err := set(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	if c.ReadOnly { // the process's read-only is an upper bound no file raises
		d.ReadOnly = true
	}
	if secretFrom != "" {
		if !d.TokenSecret.Empty() || e.TokenSecretFile != "" {
			return nil, fmt.Errorf("set only one of token_secret_file, token_secret_env and token_secret")
		}
		d.TokenSecret, d.SecretFrom = secret, secretFrom
	}
	if passwordFrom != "" {
		if !d.Password.Empty() || e.PasswordFile != "" {
			return nil, fmt.Errorf("set only one of password_file, password_env and password")
		}
		d.Password, d.PasswordFrom = password, passwordFrom
	}
	if d.SecretFrom == "PVE_API_TOKEN_SECRET" {
		d.SecretFrom = "token_secret"
	}
	if d.PasswordFrom == "PVE_PASSWORD" {
		d.PasswordFrom = "password"
	}
	d.clusterStatePaths(c, lookup)
	if err := checkConfig(&d); err != nil {
		return nil, errors.New(fileWords.Replace(err.Error()))
	}
	c.Warnings = append(c.Warnings, d.Warnings...)
	d.Warnings = nil
	return &d, nil
}

// fromEnv reads a secret from the variable name names (a key of the file).
func fromEnv(name, key string, lookup func(string) (string, bool)) (Secret, string, error) {
	if name == "" {
		return Secret{}, "", nil
	}
	v, ok := lookup(name)
	if !ok || v == "" {
		return Secret{}, "", fmt.Errorf("%s: the variable %s is not set", key, sanitize.Quote(name))
	}
	return Secret{v}, name, nil
}

// clusterStatePaths gives d (the cluster d.ClusterName of the process c)
// its own audit log and lock directory: clusters/<name>/ in the directory
// the process's audit log is in (its setting, else the state directory).
// Two clusters never share a guest lock or an audit chain, and two
// servers sharing one state directory share each cluster's. Grants stay
// in one store (the process's grant directory, so approve, deny, grants
// and the approval page find every cluster's): each grant binds its
// cluster (name, API address, token id), and a grant for one cluster
// approves nothing on another.
func (d *Config) clusterStatePaths(c *Config, lookup func(string) (string, bool)) {
	base := StateDir(lookup)
	if c.AuditLog != "" {
		base = filepath.Dir(c.AuditLog)
	}
	if base == "" {
		return // CheckRest then asks for an audit log when mutations are enabled
	}
	dir := filepath.Join(base, "clusters", d.ClusterName)
	d.AuditLog, d.AuditDefault = "", false
	if (c.AuditLog != "" && !c.AuditDefault) || d.Mutating() {
		d.AuditLog, d.AuditDefault = filepath.Join(dir, DefaultAuditLogName), c.AuditLog == "" || c.AuditDefault
	}
	d.LockDir = filepath.Join(dir, "locks")
	if c.LockDir != "" && c.LockDir != filepath.Join(filepath.Dir(c.AuditLog), "locks") {
		d.LockDir = filepath.Join(c.LockDir, d.ClusterName) // a lock directory of the operator's
	}
	d.GrantDir = c.GrantDir
	if d.GrantDir == "" {
		d.GrantDir = filepath.Join(base, "grants")
	}
}

// fileWords rewrites the environment's names in a cluster's errors into
// the file's keys.
var fileWords = strings.NewReplacer(
	"PVE_URL (--url)", "url", "PVE_API_TOKEN_ID (--token-id)", "token_id",
	"PVE_API_TOKEN_SECRET_FILE (--token-secret-file)", "token_secret_file", "PVE_API_TOKEN_SECRET", "token_secret",
	"PVE_USERNAME (--username)", "username", "PVE_PASSWORD_FILE (--password-file)", "password_file", "PVE_PASSWORD", "password",
	"PVE_REALM (--realm)", "realm", "PVE_CA_FILE (--ca-file)", "ca_file", "PVE_TLS_FINGERPRINT (--tls-fingerprint)", "tls_fingerprint",
	"PVE_TLS_INSECURE (--tls-insecure)", "tls_insecure", "PVE_ALLOW_INSECURE_HTTP=true (--allow-insecure-http)", "allow_insecure_http: true",
	"PVE_ALLOWED_NODES (--allowed-nodes)", "allowed_nodes", "PROXMOX_SAFE_PROFILE (--profile)", "profile",
	"PROXMOX_SAFE_READ_ONLY=true (--read-only)", "read_only: true",
)

// yamlKey is the file's key for a setting.
func yamlKey(env string) string {
	switch env {
	case "PVE_URL":
		return "url"
	case "PVE_API_TOKEN_ID":
		return "token_id"
	case "PVE_API_TOKEN_SECRET_FILE":
		return "token_secret_file"
	case "PVE_API_TOKEN_SECRET":
		return "token_secret"
	case "PVE_PASSWORD_FILE":
		return "password_file"
	case "PVE_PASSWORD":
		return "password"
	case "PVE_TLS_FINGERPRINT":
		return "tls_fingerprint"
	case "PVE_TLS_INSECURE":
		return "tls_insecure"
	case "PVE_ALLOWED_NODES":
		return "allowed_nodes"
	case "PROXMOX_SAFE_PROFILE":
		return "profile"
	case "PROXMOX_SAFE_PROTECTED":
		return "protected"
	case "PROXMOX_SAFE_APPROVALS":
		return "approvals"
	}
	return strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(env, "PVE_"), "PROXMOX_SAFE_"))
}

// checkClustersAlone refuses what names one cluster beside a clusters
// file (which names every cluster), and the demo.
func (c *Config) checkClustersAlone() error {
	switch {
	case c.Demo:
		return Errorf("%s cannot be combined with --demo, which connects to its own simulated cluster", ClustersSetting)
	case c.URL != "" || c.TokenID != "" || !c.TokenSecret.Empty() || c.TokenSecretFile != "" || c.Username != "" ||
		!c.Password.Empty() || c.PasswordFile != "" || c.CAFile != "" || c.Fingerprint != "" || len(c.AllowedNodes) > 0:
		return Errorf("%s names every cluster with its URL, credentials, TLS and nodes: unset PVE_URL, PVE_API_TOKEN_*, PVE_USERNAME, PVE_PASSWORD*, PVE_CA_FILE, PVE_TLS_FINGERPRINT and PVE_ALLOWED_NODES (and their flags)", ClustersSetting)
	}
	return nil
}
