package proxmoxsafe

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/redact"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// Bounds of a gateway answer ([APIResult]).
const (
	// MaxGatewayItems caps each array; the rest is left out and the
	// array's path listed in Truncated.
	MaxGatewayItems = 500
	// MaxGatewayKeys caps each object's keys (in sorted order).
	MaxGatewayKeys = 500
	// MaxGatewayStringLen caps each string in bytes.
	MaxGatewayStringLen = 4096
	// MaxGatewayDepth caps nesting; deeper values become "[too deep]".
	MaxGatewayDepth = 32
	// MaxGatewayResultBytes caps the shaped answer as JSON; a larger one
	// is left out whole (Omitted), with advice to narrow the request.
	MaxGatewayResultBytes = 512 << 10
)

// gatewaySecretKeys are the keys the gateway redacts wherever they appear
// (docs/SECURITY.md, "What the gateway redacts") beyond gatewaySecret's
// other rules, which already cover what guest configs redact
// (redactConfig: cipassword, sshkeys, args, hookscript, cicustom, raw lxc
// lines, env, entrypoint, a non-plain smbios1, and every key that names a
// secret by the one list of internal/redact, among them
// CSRFPreventionToken, keyring and privkey) and every key ending in -key
// or _key (endsInKey: client-key, encryption-key, private-key, cert-key).
// What is left: the login and console answers' ticket, a PBS storage's
// master-pubkey, a bare key, and "tfa", a realm's second-factor property
// string (GET /access/domains/{realm}, readable with Sys.Audit): for
// Yubico it holds the Yubico API key ("type=yubico,id=…,key=…",
// pve-access-control Auth/Plugin.pm), which neither the name nor the
// free-text rules see ("key" alone is not looked for in text).
var gatewaySecretKeys = map[string]bool{
	"ticket":        true,
	"tfa":           true,
	"master-pubkey": true,
	"key":           true,
}

// gatewaySecret reports whether the value under key must be redacted.
// accessPath is true under /access, where token creation answers with the
// secret as "value", and a user's "keys" (GET /access/users[/{userid}],
// "keys for two factor auth") holds what a realm that enforces a second
// factor checks: Yubico key ids, or for OATH (TOTP) the base32 secrets
// themselves (from pve-access-control's user config as we read it; not
// checked against a live system). Redacting the ids too costs nothing.
func gatewaySecret(key string, v any, accessPath bool) bool {
	k := strings.ToLower(key)
	switch {
	case gatewaySecretKeys[k], endsInKey(k), accessPath && (k == "value" || k == "keys"):
		return true
	case k == "smbios1":
		s, ok := v.(string)
		return !ok || !plainSMBIOS.MatchString(s)
	}
	return redactConfig(key, nil)
}

// endsInKey reports whether a lower-case name's last segment is "key"
// ("client-key", "api_key", "ssh-key", "eab-hmac-key"), other than a
// public key's ("public-key", "public_key").
func endsInKey(k string) bool {
	return (strings.HasSuffix(k, "-key") || strings.HasSuffix(k, "_key")) && k != "public-key" && k != "public_key"
}

// A name/value entry is an object that names a setting in one member and
// holds its value in others: GET …/pending and …/cloudinit (schema
// vm_pending: {key, value, pending, delete}), and the
// {"name":"password","value":…} shape of option lists, plugin data and
// other software's answers a proxy may relay. The setting's name is then
// a value, not a member name, so the member-name rules alone would show
// the secret. entryNameMembers are the members that may name the setting
// (case ignored), entryValueMembers those that hold its value.
var (
	entryNameMembers  = []string{"key", "name", "id", "option", "param", "parameter", "property", "field", "variable", "var", "attribute", "setting"}
	entryValueMembers = map[string]bool{"value": true, "values": true, "val": true, "pending": true, "current": true, "default": true}
)

// configEntry recognizes a name/value entry: a member of
// entryNameMembers holding a string that is a plausible setting name
// (configKeyRe), beside a member of entryValueMembers. keyNames reports
// that a "key" member names the setting: it is then shown, as a name,
// although "key" is otherwise redacted. secret reports that a setting
// named is one whose values are redacted (gatewaySecret, as GuestConfig
// redacts its key), so every value member is.
func configEntry(x map[string]any) (keyNames, secret bool) {
	hasValue := false
	for k := range x {
		hasValue = hasValue || entryValueMembers[strings.ToLower(k)]
	}
	if !hasValue {
		return false, false
	}
	for k, v := range x {
		name, ok := v.(string)
		if !ok || !slices.Contains(entryNameMembers, strings.ToLower(k)) || !configKeyRe.MatchString(name) {
			continue
		}
		keyNames = keyNames || strings.EqualFold(k, "key")
		for vk, val := range x {
			if entryValueMembers[strings.ToLower(vk)] {
				secret = secret || gatewaySecret(name, val, false)
			}
		}
	}
	return keyNames, secret
}

// redactText is the one rule for a string value from upstream, in a
// gateway answer and a guest config alike: a value holding a Proxmox
// ticket is replaced whole; secret-looking arguments in free text (the
// command lines task logs quote, "db_password=x" in a description) are
// replaced, as TaskLog replaces them. s must be sanitized already:
// redaction must see the text as the reader will, or a zero-width
// character or an escape inside a name ("pass\u200bword=x") hides it
// from redaction and is then stripped, leaving the secret readable. It
// reports whether anything was replaced.
func redactText(s string) (string, bool) {
	if redact.HoldsTicket(s) {
		return RedactedValue, true
	}
	if r := redact.SecretArgs(s); r != s {
		return r, true
	}
	return s, false
}

// redactedLine is one line of upstream free text, sanitized and
// redacted by redactText, not yet capped.
func redactedLine(s string) string {
	s, _ = redactText(sanitize.Line(s))
	return s
}

// shaper walks a decoded answer, building the shaped copy and the lists of
// what it changed.
type shaper struct {
	access    bool
	redacted  []string
	truncated []string
}

// shapeAnswer turns Proxmox's "data" into an APIResult: sanitized, capped
// and redacted.
func shapeAnswer(r *gatewayReq, raw json.RawMessage) *APIResult {
	res := &APIResult{Method: r.method, Path: r.path(), Redacted: []string{}, Truncated: []string{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		// The client already decoded it once; this cannot happen.
		res.Omitted = true
		res.Note = "the answer could not be decoded"
		return res
	}
	sh := &shaper{access: len(r.segs) > 0 && strings.EqualFold(r.segs[0], "access")}
	v = sh.shape(v, "data", 0)
	res.Redacted = append(res.Redacted, sh.redacted...)
	res.Truncated = append(res.Truncated, sh.truncated...)
	if b, err := json.Marshal(v); err != nil || len(b) > MaxGatewayResultBytes {
		res.Omitted = true
		res.Note = "the answer was over " + strconv.Itoa(MaxGatewayResultBytes>>10) + " KiB after shaping and was left out; narrow the request with params (a filter, a limit) or a more specific path"
		return res
	}
	res.Data = v
	return res
}

func (sh *shaper) shape(v any, at string, depth int) any {
	if depth >= MaxGatewayDepth {
		sh.truncated = append(sh.truncated, at)
		return "[too deep]"
	}
	switch x := v.(type) {
	case string:
		x, red := redactText(sanitize.String(x))
		if red {
			sh.redacted = append(sh.redacted, at)
		}
		s, cut := sanitize.Cap(x, MaxGatewayStringLen)
		if cut {
			sh.truncated = append(sh.truncated, at)
		}
		return s
	case []any:
		n := len(x)
		if n > MaxGatewayItems {
			sh.truncated = append(sh.truncated, at+" ("+strconv.Itoa(MaxGatewayItems)+" of "+strconv.Itoa(n)+" items)")
			n = MaxGatewayItems
		}
		out := make([]any, n)
		for i := range n {
			out[i] = sh.shape(x[i], at+"["+strconv.Itoa(i)+"]", depth+1)
		}
		return out
	case map[string]any:
		keys := sortedKeys(x)
		if len(keys) > MaxGatewayKeys {
			sh.truncated = append(sh.truncated, at+" ("+strconv.Itoa(MaxGatewayKeys)+" of "+strconv.Itoa(len(keys))+" keys)")
			keys = keys[:MaxGatewayKeys]
		}
		out := make(map[string]any, len(keys))
		keyNames, secretEntry := configEntry(x)
		for _, k := range keys {
			clean := sanitize.Line(k)
			name, _ := sanitize.Cap(clean, 128)
			if _, dup := out[name]; dup || name == "" {
				continue // two keys that sanitize alike: keep the first
			}
			child := at + "." + name
			if keyNames && strings.EqualFold(k, "key") {
				out[name] = sh.shape(x[k], child, depth+1) // a config key's name
				continue
			}
			// The name is judged as shown too: a stripped character
			// inside it ("pass\u200bword") must not hide a secret's name.
			if secretEntry && entryValueMembers[strings.ToLower(k)] || gatewaySecret(k, x[k], sh.access) || gatewaySecret(clean, x[k], sh.access) {
				sh.redacted = append(sh.redacted, child)
				out[name] = RedactedValue
				continue
			}
			out[name] = sh.shape(x[k], child, depth+1)
		}
		return out
	}
	return v // json.Number, bool, nil
}
