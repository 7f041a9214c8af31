package proxmoxsafe

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// The config keys of the "config" class (docs/SECURITY.md, "Config
// keys"). Three sets, from narrow to wide:
//
//   - never-keys ([NeverConfigKey]): keys no policy can allow, because
//     they run code on the host, hand host devices or paths to the guest,
//     carry secrets, or switch off a guard;
//   - settable keys ([SettableConfigKeys]): the keys this version knows
//     how to validate against Proxmox's schema, each with its privilege;
//   - the operator's allowlist ([Policy.ConfigKeys], default
//     [DefaultConfigKeys]), a subset of the settable keys.

// configKeySpec is one settable key: the guest types that have it, the
// check of a value (Proxmox's schema for that type), and the privilege
// Proxmox wants for it (check_vm_modify_config_perm /
// check_ct_modify_config_perm).
type configKeySpec struct {
	types []GuestType
	// check returns the value as it will be sent, or a problem.
	check func(t GuestType, v string) (string, string)
	priv  string
	// freeText values are bound by digest in approval phrases, plans and
	// audit records, never quoted (see displayValue).
	freeText bool
}

var (
	bothTypes = []GuestType{TypeQEMU, TypeLXC}
	qemuOnly  = []GuestType{TypeQEMU}
	lxcOnly   = []GuestType{TypeLXC}
)

// settableConfigKeys is the catalog, bounds from the PVE 9.1 schema (PUT
// …/config). Where the schema has no maximum, maxUnbounded keeps the
// number within what Proxmox stores.
var settableConfigKeys = map[string]configKeySpec{
	"cores":       {types: bothTypes, priv: "VM.Config.CPU", check: intByType(1, maxUnbounded, 1, 8192)},
	"sockets":     {types: qemuOnly, priv: "VM.Config.CPU", check: intByType(1, maxUnbounded, 0, 0)},
	"cpulimit":    {types: bothTypes, priv: "VM.Config.CPU", check: numberByType(128, 8192)},
	"cpuunits":    {types: bothTypes, priv: "VM.Config.CPU", check: intByType(1, 262144, 0, 500000)},
	"memory":      {types: bothTypes, priv: "VM.Config.Memory", check: intByType(16, maxUnbounded, 16, maxUnbounded)},
	"balloon":     {types: qemuOnly, priv: "VM.Config.Memory", check: intByType(0, maxUnbounded, 0, 0)},
	"swap":        {types: lxcOnly, priv: "VM.Config.Memory", check: intByType(0, 0, 0, maxUnbounded)},
	"name":        {types: qemuOnly, priv: "VM.Config.Options", check: dnsName},
	"hostname":    {types: lxcOnly, priv: "VM.Config.Options", check: dnsName},
	"description": {types: bothTypes, priv: "VM.Config.Options", check: description, freeText: true},
	"tags":        {types: bothTypes, priv: "VM.Config.Options", check: tagList},
	"onboot":      {types: bothTypes, priv: "VM.Config.Options", check: boolean},
}

// maxUnbounded caps integers the schema leaves open (memory in MiB,
// cores, sockets): nine digits, far above any real guest.
const maxUnbounded = 999999999

// defaultConfigKeys is [DefaultConfigKeys]: sizing (cores, sockets,
// memory, balloon, swap), naming (name, hostname, description, tags) and
// onboot. cpulimit and cpuunits are settable but opt-in: they change how
// a guest competes with its neighbours on the host.
var defaultConfigKeys = []string{"balloon", "cores", "description", "hostname", "memory", "name", "onboot", "sockets", "swap", "tags"}

// DefaultConfigKeys returns the allowlist used when [Policy.ConfigKeys]
// is empty, sorted: balloon, cores, description, hostname, memory, name,
// onboot, sockets, swap, tags. Keys apply where the guest type has them
// (sockets, balloon and name for VMs; hostname and swap for containers).
func DefaultConfigKeys() []string { return slices.Clone(defaultConfigKeys) }

// SettableConfigKeys returns, sorted, every key [Policy.ConfigKeys] may
// name: the keys whose values this version validates against Proxmox's
// schema.
func SettableConfigKeys() []string {
	out := make([]string, 0, len(settableConfigKeys))
	for k := range settableConfigKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// neverKeys are refused whatever the policy says, with the reason.
var neverKeys = map[string]string{
	"args":         "raw QEMU arguments run whatever they say on the host and may carry secrets",
	"hookscript":   "a hook script runs on the host",
	"cicustom":     "custom cloud-init snippets come from host storage and can carry secrets or code",
	"cipassword":   "it is a secret (a password)",
	"sshkeys":      "it carries credentials (SSH keys)",
	"smbios1":      "SMBIOS fields hand arbitrary data, possibly secrets, to the guest",
	"env":          "a container's environment carries secrets",
	"entrypoint":   "it sets the command a container runs",
	"lock":         "a lock guards a running operation; setting or clearing it bypasses that guard",
	"protection":   "Proxmox's protection flag guards against deletion; change it in Proxmox itself",
	"template":     "converting a guest to a template cannot be undone",
	"features":     "container features (nesting, keyctl, mounts) widen what the container can do on the host",
	"unprivileged": "it changes a container's isolation from the host",
	"lxc":          "raw LXC settings act on the host directly",
}

// neverFamilies are indexed key families refused whatever the policy
// says (hostpci0, usb3, mp0, …), with the reason.
var neverFamilies = map[string]string{
	"hostpci":  "it passes a host PCI device to the guest",
	"usb":      "it passes a host USB device to the guest",
	"serial":   "it can attach a host serial device",
	"parallel": "it attaches a host parallel port",
	"mp":       "mount points can bind host paths into the container",
	"dev":      "it passes a host device to the container",
	"virtiofs": "it shares a host directory with the guest",
	"unused":   "deleting an unused disk destroys its data",
}

// keyFamilyPattern is what keyFamily implements: letters, then digits.
const keyFamilyPattern = `^([a-z]+)[0-9]*$`

// keyFamily returns the family of an indexed key ("hostpci" of
// "hostpci0"): the lowercase letters before its trailing digits; ok is
// false when k is not letters then digits. Written out instead of matching
// keyFamilyPattern: every start checks the configured keys, and a start
// that compiles no regexp answers its first request sooner;
// TestKeyFamilyIsPattern holds it to the pattern.
func keyFamily(k string) (family string, ok bool) {
	i := len(k)
	for i > 0 && '0' <= k[i-1] && k[i-1] <= '9' {
		i--
	}
	if i == 0 {
		return "", false
	}
	for j := 0; j < i; j++ {
		if k[j] < 'a' || k[j] > 'z' {
			return "", false
		}
	}
	return k[:i], true
}

// NeverConfigKey reports whether key is one no policy can allow, and why.
// The check ignores case and indexes: "ARGS", "hostpci0", "Usb3", "mp0"
// and "lxc.apparmor.profile" are all never-keys.
func NeverConfigKey(key string) (reason string, never bool) {
	k := strings.ToLower(strings.TrimSpace(key))
	if r, ok := neverKeys[k]; ok {
		return r, true
	}
	if strings.HasPrefix(k, "lxc.") || strings.HasPrefix(k, "lxc[") {
		return neverKeys["lxc"], true
	}
	if family, ok := keyFamily(k); ok {
		if r, ok := neverFamilies[family]; ok {
			return r, true
		}
	}
	return "", false
}

// compileConfigKeys checks [Policy.ConfigKeys] for New and returns the
// allowlist as a set.
func compileConfigKeys(keys []string) (map[string]bool, error) {
	if len(keys) == 0 {
		keys = defaultConfigKeys
	}
	out := make(map[string]bool, len(keys))
	for _, k := range keys {
		if reason, never := NeverConfigKey(k); never {
			return nil, configError("Policy.ConfigKeys", "Policy.ConfigKeys: %s can never be allowed: %s", sanitize.Quote(k), reason)
		}
		if _, ok := settableConfigKeys[k]; !ok {
			return nil, configError("Policy.ConfigKeys", "Policy.ConfigKeys: %s is not a key this version can set (settable: %s)", sanitize.Quote(k), strings.Join(SettableConfigKeys(), ", "))
		}
		out[k] = true
	}
	return out, nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Value checks. Each returns the value as it will be sent, or a problem
// in plain words.

// intByType checks an integer within the bounds of the guest type; a
// type whose bounds are both zero does not have the key (the spec's
// types already refuse it).
func intByType(qmin, qmax, lmin, lmax int) func(GuestType, string) (string, string) {
	return func(t GuestType, v string) (string, string) {
		lo, hi := qmin, qmax
		if t == TypeLXC {
			lo, hi = lmin, lmax
		}
		if !digitsRe.Regexp().MatchString(v) {
			return "", "must be a whole number"
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return "", "must be between " + strconv.Itoa(lo) + " and " + strconv.Itoa(hi)
		}
		return strconv.Itoa(n), ""
	}
}

var (
	digitsRe = lazyre.New(`^[0-9]{1,9}$`)
	numberRe = lazyre.New(`^[0-9]{1,5}(\.[0-9]{1,4})?$`)
)

// numberByType checks a number from 0 to the type's maximum (cpulimit).
func numberByType(qmax, lmax float64) func(GuestType, string) (string, string) {
	return func(t GuestType, v string) (string, string) {
		hi := qmax
		if t == TypeLXC {
			hi = lmax
		}
		n, err := strconv.ParseFloat(v, 64)
		if !numberRe.Regexp().MatchString(v) || err != nil || n > hi {
			return "", "must be a number from 0 to " + strconv.FormatFloat(hi, 'f', -1, 64)
		}
		return v, ""
	}
}

func dnsName(_ GuestType, v string) (string, string) {
	if len(v) > 255 || !dnsNameRe.Regexp().MatchString(v) {
		return "", "must be a DNS name (letters, digits, hyphens and dots; at most 255 characters)"
	}
	return v, ""
}

// MaxConfigDescriptionLen is the schema's maxLength of a guest's
// description.
const MaxConfigDescriptionLen = 8192

func description(_ GuestType, v string) (string, string) {
	switch {
	case len(v) > MaxConfigDescriptionLen:
		return "", "must be at most 8192 bytes"
	case !utf8.ValidString(v) || !sanitize.Clean(v) || strings.ContainsRune(v, '\r'):
		return "", "must be plain text: no control, zero-width or bidirectional characters, no escape sequences"
	}
	return v, ""
}

// tagList checks pve-tag-list and returns the tags as Proxmox stores them
// by default: unique, sorted, joined by ";".
func tagList(_ GuestType, v string) (string, string) {
	tags := strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
	if len(tags) == 0 {
		return "", "must list at least one tag (delete the key to remove all tags)"
	}
	for _, tag := range tags {
		if !tagRe.MatchString(tag) {
			return "", "has an invalid tag (a tag is letters, digits, _, +, . and -, starting with a letter, digit or _)"
		}
	}
	sort.Strings(tags)
	return strings.Join(slices.Compact(tags), ";"), ""
}

func boolean(_ GuestType, v string) (string, string) {
	if v != "0" && v != "1" {
		return "", "must be 0 or 1"
	}
	return v, ""
}

// displayValue is how a value appears in approval phrases, plans, effects
// and audit records: free text as its digest and length, never quoted.
func displayValue(key, v string) string {
	if spec, ok := settableConfigKeys[key]; ok && spec.freeText {
		return freeTextDigest(v)
	}
	return v
}

// freeTextDigest binds a free-text value: "sha256:" and the first 16 hex
// digits of its SHA-256. Whitespace at the end is not part of it:
// Proxmox may add or drop a trailing newline when it stores the text.
func freeTextDigest(v string) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(v, " \t\n")))
	return "sha256:" + hex.EncodeToString(sum[:8])
}
