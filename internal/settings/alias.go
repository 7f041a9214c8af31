package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
)

// alias is another name for a setting, the name that other Proxmox MCP
// servers and Proxmox tooling use for the same thing, so a deployment can
// switch to this binary without renaming its environment. An alias is an
// environment variable only (flags are ours alone).
//
// Rules (docs/CONFIGURATION.md, "Migrating"): a flag still wins over every
// variable; when the setting's own variable and an alias (or two aliases)
// are both set, they must mean the same value after translation, or the
// program refuses to start, naming both. The setting's own name is reported
// as the source when both agree.
type alias struct {
	env string
	// value translates the alias's value into the setting's own form
	// (PVE_VERIFY_SSL=false → PVE_TLS_INSECURE=true); nil passes it on
	// unchanged. Its error says what was wrong with the value.
	value func(v string) (string, error)
	// note is the migration table's remark, e.g. "inverted"; may be "".
	note string
}

// sameAlias is the alias whose value is the setting's own.
func sameAlias(env string) alias { return alias{env: env} }

// invertedBoolAlias is an alias whose boolean means the opposite of the
// setting's (verify vs skip verification). Python tooling writes True and
// False, so the case of the alias's value is ignored; the values themselves
// are as strict as ours.
func invertedBoolAlias(env string) alias {
	return alias{env: env, note: "inverted boolean", value: func(v string) (string, error) {
		b, err := parseBool(strings.ToLower(strings.TrimSpace(v)))
		if err != nil {
			return "", err
		}
		return strconv.FormatBool(!b), nil
	}}
}

// envValue is a value found for a setting and the variable it came from.
type envValue struct{ name, v string }

// lookupEnv returns the setting's value from its own variable or its
// aliases, and the variable that supplied it. ok is false when none is set
// (an empty variable counts as unset). Different values under two names are
// a startup error.
func (s *setting) lookupEnv(lookup func(string) (string, bool)) (envValue, bool, error) {
	var found []envValue
	if s.env != "" {
		if v, ok := lookup(s.env); ok && strings.TrimSpace(v) != "" {
			found = append(found, envValue{s.env, v})
		}
	}
	for _, a := range s.aliases {
		v, ok := lookup(a.env)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if a.value != nil {
			t, err := a.value(v)
			if err != nil {
				return envValue{}, false, Errorf("%s (alias of %s): %v", a.env, s.env, err)
			}
			v = t
		}
		found = append(found, envValue{a.env, v})
	}
	if len(found) == 0 {
		return envValue{}, false, nil
	}
	first := found[0]
	for _, other := range found[1:] {
		if !s.sameValue(first.v, other.v) {
			shown := ""
			if !s.secret {
				shown = fmt.Sprintf(" (%s and %s after translation)", sanitize.Quote(strings.TrimSpace(first.v)), sanitize.Quote(strings.TrimSpace(other.v)))
			}
			return envValue{}, false, Errorf("%s and %s are the same setting and are both set, to different values%s: set only one; nothing was started", first.name, other.name, shown)
		}
	}
	return first, true, nil
}

// sameValue reports whether two values of the setting mean the same:
// booleans by what they parse to, anything else by its trimmed text.
func (s *setting) sameValue(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if s.boolean {
		x, errA := parseBool(a)
		y, errB := parseBool(b)
		if errA == nil && errB == nil {
			return x == y
		}
	}
	return a == b
}

// source names where a setting's value came from, by the setting's own
// variable: an alias's name when the alias supplied it, else env itself.
func (c *Config) Source(env string) string {
	if n, ok := c.setFrom[env]; ok {
		return n
	}
	return env
}
