package proxmoxsafe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/humantime"
	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// Protection rules, available in every profile (not only the responder's,
// which relies on them most since it may run without approval): guests
// protected by VMID, name, tag or pool, and a minimum uptime before a
// reboot or reset. They are part of [Policy]; this file compiles and
// applies them. (The transport guard, the other layer that refuses on the
// operator's behalf, is transport.go's.)

// DefaultMinUptime is the minimum uptime before a reboot or reset when
// [Policy.MinUptime] is zero. An hour stops a responder that reacts to the
// same alert twice from rebooting a guest in a loop.
const DefaultMinUptime = time.Hour

// poolRe is pve-poolid (pve-access-control: letters, digits, '_', '-'),
// capped at 64 characters.
var poolRe = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$`)

// guestNameRe accepts what Proxmox accepts as a guest name (a DNS name)
// and its short form: letters, digits, '-' and '.'.
var guestNameRe = lazyre.New(`^[A-Za-z0-9]([A-Za-z0-9.-]{0,126}[A-Za-z0-9])?$`)

// protectRules is the compiled form of the protection, uptime, reset and
// retention fields of [Policy].
type protectRules struct {
	names, tags []string // lower case
	pools       []string // exact
	minUptime   time.Duration
	// resetWithoutAgent: a VM without a configured guest agent may be
	// reset (the agent cannot tell whether it is hung).
	resetWithoutAgent bool
	retention         retention.Policy
}

// compileProtectRules checks and compiles the protection rule fields of p.
// Errors name the Policy field at fault.
func compileProtectRules(p Policy) (*protectRules, error) {
	g := &protectRules{resetWithoutAgent: p.ResetWithoutAgent}
	for _, n := range p.ProtectedNames {
		if !guestNameRe.MatchString(n) {
			return nil, &ConfigError{Field: "Policy.ProtectedNames", Problem: fmt.Sprintf("Policy.ProtectedNames: %q is not a guest name (letters, digits, '-' and '.')", n)}
		}
		g.names = appendNew(g.names, strings.ToLower(n))
	}
	for _, t := range p.ProtectedTags {
		if !tagRe.MatchString(t) {
			return nil, &ConfigError{Field: "Policy.ProtectedTags", Problem: fmt.Sprintf("Policy.ProtectedTags: %q is not a Proxmox tag", t)}
		}
		g.tags = appendNew(g.tags, strings.ToLower(t))
	}
	for _, pool := range p.ProtectedPools {
		if !poolRe.MatchString(pool) {
			return nil, &ConfigError{Field: "Policy.ProtectedPools", Problem: fmt.Sprintf("Policy.ProtectedPools: %q is not a Proxmox pool id", pool)}
		}
		g.pools = appendNew(g.pools, pool)
	}
	switch {
	case p.MinUptime == 0:
		g.minUptime = DefaultMinUptime
	case p.MinUptime > 0:
		g.minUptime = p.MinUptime
	}
	r, err := p.Retention.WithDefaults()
	if err != nil {
		return nil, &ConfigError{Field: "Policy.Retention", Problem: "Policy.Retention: " + err.Error()}
	}
	g.retention = r
	return g, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// byAttributes reports whether any protection by name, tag or pool is set;
// only then must a mutation read the guest's attributes first.
func (g *protectRules) byAttributes() bool {
	return len(g.names)+len(g.tags)+len(g.pools) > 0
}

// shortName is a DNS name's first label: "db" for "db.example.com".
func shortName(name string) string {
	s, _, _ := strings.Cut(name, ".")
	return s
}

// protectedBy says why a guest with these attributes is protected, or ""
// when it is not. A protected name matches the guest's full name or its
// short name ("db" protects "db.example.com"), and a protected full name
// also protects a guest named by its short form ("db.example.com" protects
// "db"): over-protecting is the safe mistake. Names and tags compare
// without case, as Proxmox's own tag handling does; pools exactly.
func (g *protectRules) protectedBy(name string, tags []string, pool string) string {
	var n string
	if len(g.names) > 0 { // lowering a long name for nothing showed in listings
		n = strings.ToLower(name)
	}
	for _, p := range g.names {
		if n != "" && (p == n || p == shortName(n) || shortName(p) == n) {
			return fmt.Sprintf("its name %q matches the protected name %q", name, p)
		}
	}
	for _, t := range tags {
		if slices.Contains(g.tags, strings.ToLower(t)) {
			return fmt.Sprintf("it carries the protected tag %q", t)
		}
	}
	if pool != "" && slices.Contains(g.pools, pool) {
		return fmt.Sprintf("it is in the protected pool %q", pool)
	}
	return ""
}

// checkProtected refuses a mutation of a guest protected by name, tag or
// pool, read fresh from /cluster/resources (the one place Proxmox reports
// all three) by protection, whose verdict protectedBy returns (the
// pipeline sends that read with its others). A guest that cannot be found
// there is refused too: its protection cannot be ruled out.
func (c *Client) checkProtected(t Target, s GuestState, protectedBy func() (string, error)) error {
	why, err := protectedBy()
	if err != nil {
		return &PreconditionReadError{Err: err}
	}
	if why != "" {
		return refuse(ErrNotAllowed, "%s is protected by the operator: %s", describe(t, s), why)
	}
	return nil
}

// protection says why the operator protects the guest by name, tag or
// pool ("" when not), reading /cluster/resources only when such
// protections exist. VMID protection is the policy step's.
func (c *Client) protection(ctx context.Context, t Target) (string, error) {
	g := c.policy.protect
	if !g.byAttributes() {
		return "", nil
	}
	raw, err := c.vmResources(ctx)
	if err != nil {
		return "", err
	}
	for i := range raw {
		r := &raw[i]
		if int(r.VMID) != t.VMID || (r.Type != "qemu" && r.Type != "lxc") {
			continue
		}
		return g.protectedBy(string(r.Name), splitTags(string(r.Tags)), string(r.Pool)), nil
	}
	return fmt.Sprintf("guest %d is not in the cluster resource list, so whether a protection by name, tag or pool applies cannot be ruled out", t.VMID), nil
}

// checkUptime refuses a reboot or reset of a guest that has been up for
// less than the minimum uptime. uptime is what status/current reported.
func (g *protectRules) checkUptime(action string, t Target, s GuestState, uptime time.Duration) error {
	if g.minUptime <= 0 || uptime >= g.minUptime {
		return nil
	}
	return refuse(ErrPrecondition, "%s has been up for %s, less than the minimum uptime %s before a %s (the guard against reboot loops; wait, or ask the operator)",
		describe(t, s), humantime.Duration(uptime), humantime.Duration(g.minUptime), action)
}

// sameForApproval reports whether two reads of a guest show the state an
// approval was given for. Uptime is left out: it grows between any two
// reads, and the checks that depend on it run again on the fresh read.
func sameForApproval(a, b GuestState) bool {
	a.Uptime, b.Uptime = 0, 0
	return a == b
}
