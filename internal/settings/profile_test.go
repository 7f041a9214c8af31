package settings

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestProfileHelpFromLibrary: --profile's help names every profile with
// exactly the classes the library gives it, so it cannot claim that admin
// enables fewer classes than it does.
func TestProfileHelpFromLibrary(t *testing.T) {
	t.Parallel()
	help := profileHelp()
	for _, p := range proxmoxsafe.Profiles() {
		classes, err := p.Classes()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		names := make([]string, len(classes))
		for i, c := range classes {
			names[i] = string(c)
		}
		want := string(p)
		switch p {
		case proxmoxsafe.ProfileResponder:
			want += " (alias claptrap)"
		case proxmoxsafe.ProfileSafe:
			want += " (alias default)"
		}
		want += ": "
		if len(names) == 0 {
			want += "no mutation class"
		} else {
			want += strings.Join(names, ", ")
		}
		if !strings.Contains(help, want) {
			t.Errorf("--profile help misses %q:\n%s", want, help)
		}
	}
}

// TestClaptrapIsTheResponderProfile: the alias is accepted at the edge,
// kept as written for messages, and enables what responder enables.
func TestClaptrapIsTheResponderProfile(t *testing.T) {
	t.Parallel()
	c, err := Parse(nil, env(with("PROXMOX_SAFE_PROFILE", "claptrap")...))
	if err != nil {
		t.Fatal(err)
	}
	if c.Profile != "claptrap" || !slices.Equal(c.Classes(), []proxmoxsafe.Class{proxmoxsafe.ClassResponder}) || c.CheckProfile() != nil {
		t.Errorf("profile %q classes %v check %v", c.Profile, c.Classes(), c.CheckProfile())
	}
	_, err = Parse(nil, env(with("PROXMOX_SAFE_PROFILE", "root")...))
	if want := `PROXMOX_SAFE_PROFILE (--profile): unknown profile "root" (known: readonly, safe or its alias default, responder or its alias claptrap, admin)`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if _, err := proxmoxsafe.Profile("claptrap").Classes(); err == nil {
		t.Error("the library knows claptrap; the alias belongs to the binary")
	}
}

// TestDefaultIsTheSafeProfile: MCP_PROXMOX_PROFILE=default, mcp-proxmox's
// own default, is accepted as the safe profile and kept as written (it
// was refused as an unknown profile).
func TestDefaultIsTheSafeProfile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"MCP_PROXMOX_PROFILE", "PROXMOX_SAFE_PROFILE"} {
		c, err := Parse(nil, env(with(name, "default")...))
		if err != nil {
			t.Fatalf("%s=default: %v", name, err)
		}
		safe, _ := proxmoxsafe.ProfileSafe.Classes()
		if c.Profile != "default" || !slices.Equal(c.Classes(), safe) || c.CheckProfile() != nil {
			t.Errorf("%s=default: profile %q classes %v check %v", name, c.Profile, c.Classes(), c.CheckProfile())
		}
	}
}
