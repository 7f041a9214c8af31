package settings

import (
	"errors"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// libFields maps the field a proxmoxsafe config error starts with to the
// variable the operator sets.
var libFields = []struct{ field, setting string }{
	{"URL", "PVE_URL (--url)"},
	{"TokenID", "PVE_API_TOKEN_ID (--token-id)"},
	{"TokenSecret", ""}, // filled from cfg.SecretFrom
	{"Username", "PVE_USERNAME (--username)"},
	{"Password", ""}, // filled from cfg.PasswordFrom
	{"Realm", "PVE_REALM (--realm)"},
	{"Fingerprint", "PVE_TLS_FINGERPRINT (--tls-fingerprint)"},
	{"CACertPEM", "PVE_CA_FILE (--ca-file)"},
	{"InsecureSkipVerify", "PVE_TLS_INSECURE (--tls-insecure)"},
	{"Policy.AllowedNodes", "PVE_ALLOWED_NODES (--allowed-nodes)"},
	{"Policy.Classes", "PROXMOX_SAFE_PROFILE (--profile)"},
	{"Policy.ProtectedNames", "PROXMOX_SAFE_PROTECTED (--protected)"},
	{"Policy.ProtectedTags", "PROXMOX_SAFE_PROTECTED (--protected)"},
	{"Policy.ProtectedPools", "PROXMOX_SAFE_PROTECTED (--protected)"},
	{"Policy.ProtectedGuests", "PROXMOX_SAFE_PROTECTED (--protected)"},
	{"Policy.Retention", "PROXMOX_SAFE_SNAPSHOT_MAX_AGE, PROXMOX_SAFE_SNAPSHOT_MAX_COUNT or PROXMOX_SAFE_AUTOSNAP_MARKER"},
	{"Audit", "PROXMOX_SAFE_AUDIT_LOG (--audit-log)"},
	{"Policy.Approvals", "PROXMOX_SAFE_APPROVALS (--approvals)"},
	{"Approvers", "PROXMOX_SAFE_APPROVALS (--approvals)"},
	{"MaxWait", "PROXMOX_SAFE_MAX_WAIT (--max-wait)"},
	{"Health", "PROXMOX_SAFE_HEALTH_STORAGE_WARN (--health-storage-warn) or PROXMOX_SAFE_HEALTH_STORAGE_CRITICAL"},
	{"LockDir", "PROXMOX_SAFE_LOCK_DIR (--lock-dir)"},
}

// settingNames rewrites the Go field names a library message may mention
// into the settings an operator of the binary uses.
var settingNames = strings.NewReplacer(
	"set AllowInsecureHTTP", "set PVE_ALLOW_INSECURE_HTTP=true (--allow-insecure-http)",
	"InsecureSkipVerify", "PVE_TLS_INSECURE",
	"CACertPEM", "PVE_CA_FILE",
)

// LibraryError prefixes a proxmoxsafe.New error with the variable that
// caused it. The library never includes the secret in its errors.
func (cfg *Config) LibraryError(err error) error {
	var ce *proxmoxsafe.ConfigError
	if !errors.As(err, &ce) {
		return Errorf("invalid configuration: %s", err)
	}
	for _, f := range libFields {
		if ce.Field == f.field {
			name := f.setting
			if name == "" {
				name = cfg.SecretFrom
				if ce.Field == "Password" {
					name = cfg.PasswordFrom
				}
			}
			if cfg.Demo {
				name = "--demo"
			}
			return Errorf("%s: %s", name, settingNames.Replace(ce.Problem))
		}
	}
	return Errorf("invalid configuration: %s", ce.Problem)
}

// HTTPOptionError names the setting behind an mcphttp option error (New
// checks what Parse cannot: the origins, hosts, path and metadata URLs).
func HTTPOptionError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "mcphttp: ")
	switch {
	case strings.HasPrefix(msg, "allowed origin"):
		return "MCP_ALLOWED_ORIGINS (--allowed-origins): " + msg
	case strings.HasPrefix(msg, "allowed host"):
		return "MCP_ALLOWED_HOSTS (--allowed-hosts): " + msg
	case strings.HasPrefix(msg, "Path"):
		return "MCP_HTTP_PATH (--http-path): " + msg
	case strings.Contains(msg, "ResourceMetadata.Resource"):
		return "MCP_PUBLIC_URL (--public-url): " + msg
	case strings.Contains(msg, "authorization server"):
		return "MCP_AUTH_SERVER (--auth-server): " + msg
	}
	return "invalid HTTP configuration: " + msg
}
