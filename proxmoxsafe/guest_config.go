package proxmoxsafe

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
)

// OpGuestConfig is the name of [Client.GuestConfig].
const OpGuestConfig Operation = "GuestConfig"

// guestConfigOp declares [Client.GuestConfig].
var guestConfigOp = operation{info: OperationInfo{
	Name:         OpGuestConfig,
	Method:       "GET",
	Route:        "/nodes/{node}/{type}/{vmid}/config",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit"},
	},
}}

// GuestConfigInput names the guest whose configuration [Client.GuestConfig]
// reads.
type GuestConfigInput struct {
	GuestRef
}

// RedactedValue replaces the whole value of every config key that can carry
// a secret. Redaction is never partial: no prefix, suffix or length of the
// original value is kept.
const RedactedValue = redact.Value

// Bounds of [Client.GuestConfig].
const (
	// MaxConfigKeys caps the keys returned; a real config has well under
	// 100, so the cap only bites on a corrupt or hostile config.
	MaxConfigKeys = 256
	// MaxConfigValueLen caps each value in bytes (a disk or network line
	// is around 100 bytes).
	MaxConfigValueLen = 1024
	// MaxDescriptionLen caps free-text descriptions (config "description",
	// snapshot descriptions) in bytes.
	MaxDescriptionLen = 512
)

// GuestConfigResult is a guest's configuration with secrets redacted and
// free text capped. Values are strings as Proxmox writes them in the config
// file (numbers and booleans as digits); strings are sanitized.
type GuestConfigResult struct {
	Node string    `json:"node"`
	Type GuestType `json:"type"`
	VMID int       `json:"vmid"`
	// Config maps config keys ("cores", "net0", "scsi0", "description", …)
	// to values. The values include pending changes not yet applied.
	Config map[string]string `json:"config"`
	// Redacted lists, sorted, the keys whose value was replaced by
	// [RedactedValue], whole or in part (a secret-looking argument in
	// free text, "db_password=[redacted]").
	Redacted []string `json:"redacted"`
	// Truncated lists, sorted, the keys whose value was cut (ending in "…").
	Truncated []string `json:"truncated"`
	// TotalKeys counts the keys Proxmox returned.
	TotalKeys int `json:"total_keys"`
	// OmittedKeys counts keys left out: beyond [MaxConfigKeys], or not a
	// valid config key name.
	OmittedKeys int `json:"omitted_keys"`
}

// Keys whose values are always redacted (docs/SECURITY.md): cloud-init password
// (PVE masks it, we redact anyway), SSH public keys (PII), raw QEMU
// arguments, hook script and cloud-init custom snippet volumes, a
// container's raw lxc.* lines, OCI environment and entrypoint (9.x).
var redactedConfigKeys = map[string]bool{
	"cipassword": true,
	"sshkeys":    true,
	"args":       true,
	"hookscript": true,
	"cicustom":   true,
	"lxc":        true,
	"env":        true,
	"entrypoint": true,
}

var (
	// configKeyRe accepts config key names (qemu "net0", "scsi0",
	// "cpuunits", lxc "mp0", "lxc.apparmor.profile", "dev0"); anything else
	// is omitted rather than sanitized, so two keys cannot collide.
	configKeyRe = lazyre.New(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)
	// plainSMBIOS is the smbios1 Proxmox writes by itself: only the uuid.
	// Any other smbios1 (manufacturer, serial, … possibly base64) can be
	// used to hand data such as cloud-init seeds with tokens to the guest.
	plainSMBIOS = lazyre.New(`^uuid=[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
)

// redactConfig reports whether the value of key must be redacted.
func redactConfig(key string, raw json.RawMessage) bool {
	k := strings.ToLower(key)
	switch {
	case redactedConfigKeys[k], strings.HasPrefix(k, "lxc."):
		return true
	case k == "smbios1":
		var s string
		return json.Unmarshal(raw, &s) != nil || !plainSMBIOS.MatchString(s)
	}
	// Defence in depth for keys we do not know (newer versions, plugins):
	// the one list of secret names (internal/redact).
	return redact.SecretName(k)
}

// GuestConfig reads a guest's configuration (GET …/config, one request).
// Values that can carry secrets are replaced by [RedactedValue] whole, and
// listed in Redacted: cipassword, sshkeys, args, hookscript, cicustom, a
// container's raw lxc.* lines, env, entrypoint, any smbios1 other than the
// plain "uuid=…" Proxmox writes, and any key whose name names a secret
// (it contains password, passwd, secret or token, or a segment of it is
// pass, pwd, psk, api_key, private_key or another word of the list in
// docs/SECURITY.md, "Secret names"), and every other key the gateway's
// answers redact ([Client.APIGet]: it is never less strict). In every
// other value a Proxmox ticket redacts the value whole and secret-looking
// arguments ("--password x", "db_password=x") are redacted in place; such
// keys are listed in Redacted too. The description is capped at [MaxDescriptionLen]
// bytes, other values at [MaxConfigValueLen]; cut keys are listed in
// Truncated. Unknown keys pass through sanitized and capped. The node must
// be on the allowlist; nothing is sent otherwise.
func (c *Client) GuestConfig(ctx context.Context, in GuestConfigInput) (*GuestConfigResult, error) {
	const op = OpGuestConfig
	start := time.Now()
	attrs, err := c.openGuestRead(ctx, op, start, in, in.GuestRef)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := c.get(ctx, guestPath(in.Target(), "config"), nil, &raw); err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	res := &GuestConfigResult{
		Node: in.Node, Type: in.Type, VMID: in.VMID,
		Config: map[string]string{}, Redacted: []string{}, Truncated: []string{},
		TotalKeys: len(raw),
	}
	for _, k := range sortedKeys(raw) {
		if !configKeyRe.MatchString(k) || len(res.Config) == MaxConfigKeys {
			res.OmittedKeys++
			continue
		}
		if configSecret(k, raw[k]) {
			res.Config[k] = RedactedValue
			res.Redacted = append(res.Redacted, k)
			continue
		}
		v, red, cut := configValue(k, raw[k])
		res.Config[k] = v
		if red {
			res.Redacted = append(res.Redacted, k)
		}
		if cut {
			res.Truncated = append(res.Truncated, k)
		}
	}
	// sortedKeys already ordered them; keep the promise explicit.
	slices.Sort(res.Redacted)
	slices.Sort(res.Truncated)
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// configSecret reports whether the whole value of config key must be
// redacted: by the rules of the gateway's answers (gatewaySecret), which
// hold every rule of redactConfig and more, so that GuestConfig is never
// less strict than api_get of the same config.
func configSecret(key string, raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return true // not JSON: the client would not have decoded it
	}
	return redactConfig(key, raw) || gatewaySecret(key, v, false)
}

// configValue renders one config value as a sanitized, redacted, capped
// string, with the one rule for upstream strings the gateway applies too
// (redactText: a ticket whole, secret-looking arguments such as
// "db_password=x" in a description); red reports a redaction. The
// description keeps its line breaks (it is multi-line notes); everything
// else is one line. Redaction comes before the cap, which could otherwise
// cut a secret's name off its value.
func configValue(key string, raw json.RawMessage) (v string, red, cut bool) {
	s := rawText(raw)
	if key == "description" {
		s, red = redactText(sanitize.String(strings.TrimSpace(s)))
		v, cut = sanitize.Cap(s, MaxDescriptionLen)
		return v, red, cut
	}
	s, red = redactText(sanitize.Line(s))
	v, cut = sanitize.CapLine(s, MaxConfigValueLen)
	return v, red, cut
}

// rawText turns a JSON value into the text Proxmox's config file holds:
// strings as they are, numbers as written, booleans as 1/0, null as "",
// anything else (arrays, objects) as compact JSON.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case 'n':
		return ""
	case 't':
		return "1"
	case 'f':
		return "0"
	case '{', '[':
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String()
		}
	default:
		if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return string(raw)
		}
	}
	return string(raw)
}
