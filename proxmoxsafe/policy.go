package proxmoxsafe

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

// Policy is the operator's upper bound on what a [Client] may do. No input
// to an operation can widen it. The zero value allows cluster-wide reads
// (ClusterStatus, ListGuests) and nothing else.
type Policy struct {
	// AllowedNodes lists the nodes that node-targeted reads (NodeStatus) and
	// every mutation may touch. Empty means none. Names are matched exactly.
	AllowedNodes []string
	// Classes lists the enabled mutation classes. Empty means none.
	Classes []Class
	// ReadOnly refuses every mutation regardless of Classes, and lets only
	// GET requests reach Proxmox.
	ReadOnly bool
	// ProtectedGuests lists VMIDs that no mutation may touch.
	ProtectedGuests []int
	// Approvals sets, per mutation class, how its mutations are approved:
	// approval levels in order of preference. The first level whose
	// approver is available for the request decides (an approver that
	// cannot serve it, e.g. elicitation with a client that cannot elicit,
	// passes to the next); a request is never approved by a level not
	// listed. A class not in the map uses [DefaultApprovals] (the phrase for
	// every class but those that destroy without a way back).
	// Levels other than [LevelPhrase] and [LevelNone] need an approver of
	// that name in [Config.Approvers].
	Approvals map[Class][]ApprovalLevel
	// ProtectedNames, ProtectedTags and ProtectedPools protect guests by
	// name (full or short: "db" protects "db.example.com"), by tag (any
	// case) and by resource pool: no mutation may touch them, and listings
	// say protected. Each mutation then reads /cluster/resources first.
	ProtectedNames []string
	ProtectedTags  []string
	ProtectedPools []string
	// MinUptime refuses a reboot or reset ([Client.RebootGuest],
	// [Client.ResetGuest], [Client.GuestPower] with reboot) of a guest up
	// for less. Zero means [DefaultMinUptime]; negative turns the check off.
	MinUptime time.Duration
	// ResetWithoutAgent lets [Client.ResetGuest] reset a VM that has no
	// guest agent configured. Off by default: without an agent nobody can
	// tell a hung guest from a busy one.
	ResetWithoutAgent bool
	// Retention is the snapshot retention rule of
	// [Client.CleanupSnapshots]; the zero value means its defaults.
	Retention retention.Policy
	// ConfigKeys lists the config keys [Client.SetGuestConfig] may set or
	// delete (class "config"). Empty means [DefaultConfigKeys]. Only keys
	// of [SettableConfigKeys] are accepted: New refuses any other key, and
	// names the reason for a key that is never settable ([NeverConfigKey]:
	// args, hookscript, hostpci*, usb*, serial*, parallel*, raw lxc.*, mp*,
	// cicustom, secrets such as cipassword and sshkeys, …).
	ConfigKeys []string
	// RecentBackup is the recent-backup guard: for a class named here,
	// the class's operations that lose or rewrite a guest's state
	// ([RecentBackupClasses]: destroy's [Client.DestroyGuest],
	// snapshot-admin's [Client.RollbackSnapshot], config's
	// [Client.SetGuestConfig] and [Client.ResizeDisk]) are refused, before
	// any approval, unless the guest has a backup newer than the duration
	// on a backup storage its node lists; the refusal names the newest
	// backup and says to back the guest up first ([Client.BackupGuest]).
	// The zero value (nil) checks nothing; a class left out is not
	// checked. New refuses another class and an age outside 1m to
	// [MaxRecentBackupAge]. The token then also needs to list the guest's
	// backups (see [Client.ListBackups]): a backup it cannot see counts
	// as none.
	RecentBackup map[Class]time.Duration
}

// Profile names a set of mutation classes an operator can pick by name.
type Profile string

// The profiles this version knows.
const (
	// ProfileReadOnly enables no mutation class.
	ProfileReadOnly Profile = "readonly"
	// ProfileSafe enables power and snapshot: the original contract.
	ProfileSafe Profile = "safe"
	// ProfileResponder enables only the responder class (narrow tools
	// behind the protection rules): for an automated responder with no
	// human in the loop.
	ProfileResponder Profile = "responder"
	// ProfileAdmin enables the interactive admin surface: power,
	// snapshot, snapshot-admin, power-extra, provision, destroy, migrate,
	// config, backup and restore, each operation behind its class's approval, and the
	// gateway's reads (class gateway). It leaves out the responder class,
	// whose tools are meant to run unattended, and gateway-write, which no
	// profile enables. Never the default.
	ProfileAdmin Profile = "admin"
)

// Profiles returns the profiles this version knows, in order from the
// fewest classes to the most.
func Profiles() []Profile {
	return []Profile{ProfileReadOnly, ProfileSafe, ProfileResponder, ProfileAdmin}
}

// Classes returns the mutation classes the profile enables.
func (p Profile) Classes() ([]Class, error) {
	switch p {
	case ProfileReadOnly:
		return nil, nil
	case ProfileSafe:
		return []Class{ClassPower, ClassSnapshot}, nil
	case ProfileResponder:
		return []Class{ClassResponder}, nil
	case ProfileAdmin:
		return []Class{ClassPower, ClassSnapshot, ClassSnapshotAdmin, ClassPowerExtra, ClassProvision, ClassDestroy, ClassMigrate, ClassConfig, ClassBackup, ClassRestore, ClassGateway}, nil
	}
	return nil, fmt.Errorf("unknown profile %q (known: %s, %s, %s, %s)", p, ProfileReadOnly, ProfileSafe, ProfileResponder, ProfileAdmin)
}

// policy is the compiled form of Policy: sets for O(1) checks.
type policy struct {
	nodes     map[string]bool
	nodeList  []string
	classes   map[Class]bool
	readOnly  bool
	protected map[int]bool
	approvals map[Class][]ApprovalLevel
	// protect is the compiled protection rules (protect.go).
	protect *protectRules
	// configKeys is the compiled [Policy.ConfigKeys].
	configKeys map[string]bool
	// recentBackup is the compiled [Policy.RecentBackup] (backup_guard.go).
	recentBackup map[Class]time.Duration
	src          Policy
}

func compilePolicy(p Policy) (*policy, error) {
	c := &policy{
		nodes:     map[string]bool{},
		classes:   map[Class]bool{},
		protected: map[int]bool{},
		readOnly:  p.ReadOnly,
	}
	for _, n := range p.AllowedNodes {
		if !ValidNode(n) {
			return nil, configError("Policy.AllowedNodes", "Policy.AllowedNodes: %s is not a valid Proxmox node name", sanitize.Quote(n))
		}
		if !c.nodes[n] {
			c.nodes[n] = true
			c.nodeList = append(c.nodeList, n)
		}
	}
	for _, cl := range p.Classes {
		switch {
		case knownClass(cl):
			c.classes[cl] = true
		default:
			return nil, configError("Policy.Classes", "Policy.Classes: unknown mutation class %s (known: %s)", sanitize.Quote(cl), knownClassList())
		}
	}
	for _, id := range p.ProtectedGuests {
		if id < minVMID || id > maxVMID {
			return nil, configError("Policy.ProtectedGuests", "Policy.ProtectedGuests: %d is not a valid VMID", id)
		}
		c.protected[id] = true
	}
	c.approvals = map[Class][]ApprovalLevel{}
	for cl, levels := range p.Approvals {
		if !knownClass(cl) {
			return nil, configError("Policy.Approvals", "Policy.Approvals: unknown mutation class %s (known: %s)", sanitize.Quote(cl), knownClassList())
		}
		if len(levels) == 0 {
			return nil, configError("Policy.Approvals", "Policy.Approvals: class %s lists no approval level (leave it out for the class's default, DefaultApprovals)", sanitize.Quote(cl))
		}
		for i, l := range levels {
			if l == "" || slices.Contains(levels[:i], l) {
				return nil, configError("Policy.Approvals", "Policy.Approvals: class %s lists an empty or repeated approval level %s", sanitize.Quote(cl), sanitize.Quote(l))
			}
		}
		c.approvals[cl] = slices.Clone(levels)
	}
	pr, err := compileProtectRules(p)
	if err != nil {
		return nil, err
	}
	c.protect = pr
	keys, err := compileConfigKeys(p.ConfigKeys) // guest_config_keys.go
	if err != nil {
		return nil, err
	}
	c.configKeys = keys
	if c.recentBackup, err = compileRecentBackup(p.RecentBackup); err != nil {
		return nil, err
	}
	if c.readOnly {
		// Read-only mode refuses every mutation; the read classes (the
		// gateway's GET) change nothing and stay.
		for cl := range c.classes {
			if !readClasses[cl] {
				delete(c.classes, cl)
			}
		}
	}
	c.src = Policy{
		AllowedNodes:      slices.Clone(c.nodeList),
		ReadOnly:          p.ReadOnly,
		ProtectedGuests:   slices.Sorted(maps.Keys(c.protected)),
		Approvals:         c.approvals,
		ProtectedNames:    slices.Clone(p.ProtectedNames),
		ProtectedTags:     slices.Clone(p.ProtectedTags),
		ProtectedPools:    slices.Clone(p.ProtectedPools),
		MinUptime:         p.MinUptime,
		ResetWithoutAgent: p.ResetWithoutAgent,
		Retention:         pr.retention,
		ConfigKeys:        sortedSet(keys),
		RecentBackup:      maps.Clone(c.recentBackup),
	}
	for _, cl := range classOrder {
		if c.classes[cl] {
			c.src.Classes = append(c.src.Classes, cl)
		}
	}
	return c, nil
}

func (p *policy) export() Policy {
	out := p.src
	out.AllowedNodes = slices.Clone(out.AllowedNodes)
	out.Classes = slices.Clone(out.Classes)
	out.ProtectedGuests = slices.Clone(out.ProtectedGuests)
	out.ProtectedNames = slices.Clone(out.ProtectedNames)
	out.ProtectedTags = slices.Clone(out.ProtectedTags)
	out.ProtectedPools = slices.Clone(out.ProtectedPools)
	out.ConfigKeys = slices.Clone(out.ConfigKeys)
	out.RecentBackup = maps.Clone(out.RecentBackup)
	out.Approvals = make(map[Class][]ApprovalLevel, len(p.approvals))
	for cl, levels := range p.approvals {
		out.Approvals[cl] = slices.Clone(levels)
	}
	return out
}

// approvalsFor returns the class's approval levels, in order.
func (p *policy) approvalsFor(class Class) []ApprovalLevel {
	if levels, ok := p.approvals[class]; ok {
		return levels
	}
	return DefaultApprovals(class)
}

func knownClass(cl Class) bool { return slices.Contains(classOrder, cl) }

// knownClassList names the known classes for error messages.
func knownClassList() string {
	names := make([]string, len(classOrder))
	for i, cl := range classOrder {
		names[i] = string(cl)
	}
	return strings.Join(names, ", ")
}

// anyClass reports whether a class that changes something is enabled.
func (p *policy) anyClass() bool {
	for cl := range p.classes {
		if !readClasses[cl] {
			return true
		}
	}
	return false
}

// Enabled reports whether a mutation class is enabled (and not overridden by
// read-only mode).
func (c *Client) Enabled(class Class) bool { return c.policy.classes[class] }

// NodeAllowed reports whether the node is on the allowlist.
func (c *Client) NodeAllowed(node string) bool { return c.policy.nodes[node] }

// checkNode refuses a node that is not on the allowlist.
func (p *policy) checkNode(node string) error {
	if p.nodes[node] {
		return nil
	}
	if len(p.nodeList) == 0 {
		return refuse(ErrNotAllowed, "node %q is not on the node allowlist, which is empty (set the allowed nodes in the operator configuration)", node)
	}
	return refuse(ErrNotAllowed, "node %q is not on the node allowlist (allowed: %s)", node, strings.Join(p.nodeList, ", "))
}

// checkMutation is the policy step of the mutation pipeline.
func (p *policy) checkMutation(class Class, t Target) error {
	if p.readOnly {
		return refuse(ErrNotAllowed, "the server is in read-only mode")
	}
	if !p.classes[class] {
		return refuse(ErrNotAllowed, "the %q mutation class is not enabled by the operator", class)
	}
	if err := p.checkNode(t.Node); err != nil {
		return err
	}
	if p.protected[t.VMID] {
		return refuse(ErrNotAllowed, "guest %d is protected by the operator", t.VMID)
	}
	return nil
}

// manageable reports whether some enabled class could target the guest.
func (p *policy) manageable(node string, vmid int) bool {
	return !p.readOnly && p.anyClass() && p.nodes[node] && !p.protected[vmid]
}
