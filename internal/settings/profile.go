package settings

import (
	"fmt"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// profileAliases are other names the binary accepts for a profile, at the
// edge only: the library knows each profile by one name. default is the
// profile mcp-proxmox (whose MCP_PROXMOX_PROFILE we read) starts with, so
// its users' setting keeps working, as the safe profile; claptrap is the
// name the responder profile's existing users know.
var profileAliases = []struct {
	alias string
	of    proxmoxsafe.Profile
}{
	{"default", proxmoxsafe.ProfileSafe},
	{"claptrap", proxmoxsafe.ProfileResponder},
}

// profileOf is the library's profile a PROXMOX_SAFE_PROFILE value names:
// the value itself, or the profile an alias stands for.
func profileOf(v string) proxmoxsafe.Profile {
	for _, a := range profileAliases {
		if v == a.alias {
			return a.of
		}
	}
	return proxmoxsafe.Profile(v)
}

// aliasesOf lists the aliases of p.
func aliasesOf(p proxmoxsafe.Profile) []string {
	var out []string
	for _, a := range profileAliases {
		if a.of == p {
			out = append(out, a.alias)
		}
	}
	return out
}

// knownProfiles names every profile and alias, for the error of an
// unknown one: "readonly, safe, responder or its alias claptrap, admin".
func knownProfiles() string {
	var names []string
	for _, p := range proxmoxsafe.Profiles() {
		n := string(p)
		if as := aliasesOf(p); len(as) > 0 {
			n += " or its alias " + strings.Join(as, ", ")
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// setProfile takes PROXMOX_SAFE_PROFILE. The value is kept as written (so
// messages name what the user wrote); Classes resolves an alias.
func setProfile(c *Config, v string) error {
	v = strings.TrimSpace(v)
	if _, err := profileOf(v).Classes(); err != nil {
		return fmt.Errorf("unknown profile %s (known: %s)", sanitize.Quote(v), knownProfiles())
	}
	c.Profile = v
	return nil
}

// profileHelp is --profile's help, built from the library's profiles and
// their classes when the help is shown, so it cannot go stale when a
// profile gains a class.
func profileHelp() string {
	var parts []string
	for _, p := range proxmoxsafe.Profiles() {
		classes, _ := p.Classes()
		name := string(p)
		if as := aliasesOf(p); len(as) > 0 {
			name += " (alias " + strings.Join(as, ", ") + ")"
		}
		list := "no mutation class"
		if len(classes) > 0 {
			s := make([]string, len(classes))
			for i, cl := range classes {
				s[i] = string(cl)
			}
			list = strings.Join(s, ", ")
		}
		parts = append(parts, name+": "+list)
	}
	return "mutation profile, with the mutation classes it enables: " + strings.Join(parts, "; ") +
		"; each class's tools are in docs/TOOLS.md, each mutation behind its class's approval"
}

// CheckProfile reports an unknown profile as a configuration error naming
// the setting (Parse refuses one already; setup checks again before it
// builds a client from it).
func (c *Config) CheckProfile() error {
	if _, err := profileOf(c.Profile).Classes(); err != nil {
		return Errorf("PROXMOX_SAFE_PROFILE (--profile): %v", err)
	}
	return nil
}

// profileDoc is PROXMOX_SAFE_PROFILE's row in docs/CONFIGURATION.md, built
// like profileHelp from the library's profiles.
func profileDoc() string {
	var parts []string
	for _, p := range proxmoxsafe.Profiles() {
		classes, _ := p.Classes()
		name := "`" + string(p) + "`"
		for _, a := range aliasesOf(p) {
			name += " (alias `" + a + "`)"
		}
		list := "no mutation class"
		if len(classes) > 0 {
			s := make([]string, len(classes))
			for i, cl := range classes {
				s[i] = "`" + string(cl) + "`"
			}
			list = strings.Join(s, ", ")
		}
		parts = append(parts, name+": "+list)
	}
	return "The mutation classes the profile enables: " + strings.Join(parts, "; ") + ". " +
		"docs/TOOLS.md lists each class's tools; every mutation stays behind its class's approval (*Approval levels*). " +
		"`responder` is for an automated responder: its tools are guarded (README, \"The responder profile\"). " +
		"`gateway` is the read-only `api_get` (a GET of any API path outside the deny list), so `PROXMOX_SAFE_READ_ONLY` keeps it; " +
		"`gateway-write` is in no profile (`PROXMOX_SAFE_GATEWAY_WRITE`)."
}
