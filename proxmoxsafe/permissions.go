package proxmoxsafe

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// OpPermissions is the name of [Client.Permissions].
const OpPermissions Operation = "Permissions"

// permissionsOp declares [Client.Permissions].
var permissionsOp = operation{info: OperationInfo{
	Name:   OpPermissions,
	Method: "GET",
	Route:  "/access/permissions",
}}

// dangerousPrivileges are privileges no operation of this package needs
// and that let a token holder take over guests, hosts or the cluster's
// access control. Prefix entries end with ".".
var dangerousPrivileges = []struct{ name, risk string }{
	{"Permissions.Modify", "can grant itself or others any privilege"},
	{"Sys.Modify", "can change node network, time, DNS, certificates and cluster settings"},
	{"Sys.PowerMgmt", "can shut down or reboot nodes"},
	{"Sys.Console", "has a root shell on the nodes"},
	{"VM.Console", "has console access to guests"},
	{"VM.Allocate", "can create and destroy guests"},
	{"User.Modify", "can change users, tokens and group memberships"},
	{"Realm.", "can change authentication realms"},
	{"VM.Monitor", "has QEMU monitor access (PVE 8 and older), which can read guest memory and change the running VM"},
	{"VM.GuestAgent.Audit", "can read information from inside guests through the agent (users, network, file systems)"},
	{"VM.GuestAgent.", "can run commands or read and write files inside guests through the agent"},
	{"Datastore.Allocate", "can create, change or delete storages and volumes"},
}

func dangerRisk(priv string) (string, bool) {
	for _, d := range dangerousPrivileges {
		if priv == d.name || (strings.HasSuffix(d.name, ".") && strings.HasPrefix(priv, d.name)) ||
			(d.name == "Datastore.Allocate" && strings.HasPrefix(priv, d.name)) {
			return d.risk, true
		}
	}
	return "", false
}

// PermissionsReport compares the token's effective privileges with what the
// checked operations need under the current policy.
type PermissionsReport struct {
	// TokenID is the token checked (never the secret), or the user with
	// ticket authentication.
	TokenID string `json:"token_id"`
	// OK is true when nothing required is missing (optional privileges and
	// privileges held beyond need do not count).
	OK bool `json:"ok"`
	// Operations are the operations checked.
	Operations []Operation `json:"operations"`
	// Privileges is the token's effective privilege map from Proxmox, per
	// ACL path, ordered by path (at most 200 paths).
	Privileges []PathPrivileges `json:"privileges"`
	// PathsTotal counts every path of the map.
	PathsTotal int `json:"paths_total"`
	// Checks has one entry per needed (operation, path, privilege).
	Checks []PrivilegeCheck `json:"checks"`
	// Missing groups what to grant, per ACL path, with the command.
	Missing []MissingGrant `json:"missing"`
	// Excess lists privileges the token holds that no checked operation
	// needs; Dangerous ones are flagged.
	Excess []ExcessPrivilege `json:"excess"`
	// Dangerous is true when some privilege held beyond need is dangerous.
	Dangerous bool `json:"dangerous"`
	// Role and RoleCommand define a role with exactly what is required.
	Role        string `json:"role"`
	RoleCommand string `json:"role_command"`
	// OptionalRoleCommand defines [OptionalRoleName] with the optional
	// privileges that are missing; empty when none is.
	OptionalRoleCommand string `json:"optional_role_command,omitempty"`
	// Notes explain what was not checked and why.
	Notes []string `json:"notes"`
}

// PathPrivileges is the token's effective privileges on one ACL path.
type PathPrivileges struct {
	Path       string   `json:"path"`
	Privileges []string `json:"privileges"`
}

// PrivilegeCheck is one needed privilege and whether the token holds it.
type PrivilegeCheck struct {
	Operation Operation `json:"operation"`
	Class     Class     `json:"class,omitempty"`
	// Path is the concrete ACL path checked, e.g. "/nodes/pve1" or "/vms".
	Path      string `json:"path"`
	Privilege string `json:"privilege"`
	Optional  bool   `json:"optional,omitempty"`
	// Status is "held", "partial" (only on some guests or storages below
	// Path, listed in HeldOn) or "missing".
	Status string   `json:"status"`
	HeldOn []string `json:"held_on,omitempty"`
	Note   string   `json:"note,omitempty"`
}

// MissingGrant is what to grant on one ACL path.
type MissingGrant struct {
	Path       string      `json:"path"`
	Privileges []string    `json:"privileges"`
	Operations []Operation `json:"operations"`
	// Optional is true when only optional privileges are missing here.
	Optional bool `json:"optional,omitempty"`
	// Command grants the role to the token; UserCommand grants it to the
	// token's user, which a privilege-separated token also needs (its
	// privileges are the intersection of both). With ticket
	// authentication Command grants it to the user and UserCommand is "".
	Command     string `json:"command"`
	UserCommand string `json:"user_command"`
}

// ExcessPrivilege is a privilege held beyond need.
type ExcessPrivilege struct {
	Privilege string   `json:"privilege"`
	Paths     []string `json:"paths"`
	Dangerous bool     `json:"dangerous"`
	// Risk says what a holder of a dangerous privilege can do.
	Risk string `json:"risk,omitempty"`
}

// RoleName is the custom role the report's commands create and assign
// for required privileges; OptionalRoleName holds optional ones, so an
// operator can leave them out deliberately.
const (
	RoleName         = "ProxmoxSafeMCP"
	OptionalRoleName = "ProxmoxSafeMCPExtra"
)

// Bounds on what Proxmox's map may contribute to a report.
const (
	maxPermPaths      = 200
	maxPrivsPerPath   = 128
	maxHeldOn         = 10
	maxExcessPathList = 20
)

var (
	aclPathRe = lazyre.New(`^/[A-Za-z0-9/._@!:-]{0,255}$`)
	privRe    = lazyre.New(`^[A-Za-z][A-Za-z0-9._]{0,63}$`)
)

// Permissions reads the token's own effective privileges (GET
// /access/permissions, which any token may call for itself) and compares
// them with what the operations the current policy enables need: reads
// always, node-targeted reads when the allowlist is not empty, mutations of
// the enabled classes. See [Client.PermissionsFor].
func (c *Client) Permissions(ctx context.Context) (*PermissionsReport, error) {
	return c.PermissionsFor(ctx, nil)
}

// PermissionsFor is [Client.Permissions] for the named operations (as in
// [OperationNames]); nil means the operations the policy enables. Unknown names
// are refused before any request. Node paths are checked for every
// allowlisted node; guest and storage paths on /vms and /storage, with
// "partial" when the token holds the privilege only on some guests or
// storages. A privilege on a path applies below it when it propagates.
func (c *Client) PermissionsFor(ctx context.Context, operations []Operation) (*PermissionsReport, error) {
	start := time.Now()
	ops, err := c.policyOperations(operations)
	if err != nil {
		return nil, c.logged(ctx, "Permissions", start, err)
	}
	// The release decides which privilege the guest agent reads need, so
	// it is read beside the map (one round trip, not two).
	var (
		raw    map[string]map[string]pve.Int
		ver    rawVersion
		verErr error
		wg     sync.WaitGroup
	)
	wg.Go(func() { verErr = c.get(ctx, "/version", nil, &ver) })
	err = c.get(ctx, "/access/permissions", nil, &raw)
	wg.Wait()
	if err != nil {
		return nil, c.logged(ctx, "Permissions", start, err)
	}
	acl := compileACL(raw)
	major := 0
	if verErr == nil {
		major = releaseMajor(string(ver.Release))
	}
	rep := c.comparePermissions(acl, ops, major)
	if major == 0 {
		rep.Notes = append(rep.Notes, "the Proxmox release could not be read: the guest agent's privileges are given as PVE 9 names them (VM.GuestAgent.Audit; PVE 7 and 8 call it VM.Monitor)")
	}
	c.logged(ctx, "Permissions", start, nil)
	return rep, nil
}

// releaseMajor is the major number of a release such as "9.1", or 0 when
// it is not one.
func releaseMajor(release string) int {
	head, _, _ := strings.Cut(release, ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 1 || n > 99 {
		return 0
	}
	return n
}

// releasePrivilege is the privilege Proxmox release major (0: unknown, taken
// as the newest) checks in place of priv, with a note when it differs. The
// guest agent privileges arrived in PVE 9; before, the agent's read calls
// checked VM.Monitor (schema-subset 7.4 and 8.4), and a role naming
// VM.GuestAgent.Audit is refused there as an unknown privilege.
func releasePrivilege(priv string, major int) (string, string) {
	if major != 0 && major < 9 && strings.HasPrefix(priv, "VM.GuestAgent.") {
		return "VM.Monitor", "PVE " + strconv.Itoa(major) + " checks VM.Monitor where PVE 9 checks " + priv
	}
	return priv, ""
}

// policyOperations validates names, or picks the policy's operations.
func (c *Client) policyOperations(names []Operation) ([]Operation, error) {
	known := OperationNames()
	if names != nil {
		var bad []FieldError
		var out []Operation
		for _, n := range names {
			if !slices.Contains(known, n) {
				bad = append(bad, FieldError{Field: "operations", Problem: "unknown operation (known: " + joinOps(known) + ")"})
				break
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		if bad != nil {
			return nil, &ValidationError{Fields: bad}
		}
		return out, nil
	}
	var out, free []Operation
	for _, op := range operations {
		switch {
		case op.permissionFree():
			free = append(free, op.info.Name)
		case len(op.info.Privileges) == 0, op.info.Class != "" && !c.policy.classes[op.info.Class]:
		default:
			out = append(out, op.info.Name)
		}
	}
	return append(out, free...), nil
}

// aclMap is the token's effective privileges: path → privilege → propagates.
type aclMap map[string]map[string]bool

func compileACL(raw map[string]map[string]pve.Int) aclMap {
	out := aclMap{}
	for _, p := range sortedKeys(raw) {
		if len(out) == maxPermPaths*5 || !aclPathRe.MatchString(p) {
			continue
		}
		privs := map[string]bool{}
		for priv, prop := range raw[p] {
			if len(privs) < maxPrivsPerPath && privRe.MatchString(priv) {
				privs[priv] = prop != 0
			}
		}
		out[p] = privs
	}
	return out
}

// holds reports whether the token holds priv on path: the nearest path of
// the map at or above it decides, and an inherited privilege counts only
// when it propagates (PVE's ACL semantics; the map lists every ACL path).
func (a aclMap) holds(path, priv string) bool {
	for p := path; ; p = aclParent(p) {
		if privs, ok := a[p]; ok {
			prop, has := privs[priv]
			return has && (p == path || prop)
		}
		if p == "/" {
			return false
		}
	}
}

func aclParent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func (c *Client) comparePermissions(acl aclMap, ops []Operation, major int) *PermissionsReport {
	rep := &PermissionsReport{TokenID: c.tokenID, Operations: ops, Privileges: []PathPrivileges{}, Checks: []PrivilegeCheck{},
		Missing: []MissingGrant{}, Excess: []ExcessPrivilege{}, Notes: []string{}, Role: RoleName, OK: true}
	for _, p := range sortedKeys(acl) {
		rep.PathsTotal++
		if len(rep.Privileges) < maxPermPaths {
			rep.Privileges = append(rep.Privileges, PathPrivileges{Path: p, Privileges: sortedKeys(acl[p])})
		}
	}
	needed := map[string]bool{}
	// neededOn: optional dangerous privileges, by the concrete paths that use them.
	neededOn := map[string]map[string]bool{}
	var roleRequired []string
	var skipped []Operation
	for _, r := range Requirements() {
		if !slices.Contains(ops, r.Operation) {
			continue
		}
		if r.NodeTargeted && len(c.policy.nodeList) == 0 {
			if !slices.Contains(skipped, r.Operation) {
				skipped = append(skipped, r.Operation)
			}
			continue
		}
		priv, releaseNote := releasePrivilege(r.Privilege, major)
		note := r.Note
		if releaseNote != "" {
			note = releaseNote
		}
		_, dangerous := dangerRisk(priv)
		if !r.Optional || !dangerous {
			needed[priv] = true
		}
		if !r.Optional && !slices.Contains(roleRequired, priv) {
			roleRequired = append(roleRequired, priv)
		}
		for _, path := range c.concretePaths(r.Path) {
			ch := PrivilegeCheck{Operation: r.Operation, Class: r.Class, Path: path, Privilege: priv,
				Optional: r.Optional, Note: note, Status: "missing"}
			switch {
			case acl.holds(path, priv):
				ch.Status = "held"
			case path == "/vms" || path == "/storage":
				for _, p := range sortedKeys(acl) {
					if strings.HasPrefix(p, path+"/") && acl.holds(p, priv) && len(ch.HeldOn) < maxHeldOn {
						ch.HeldOn = append(ch.HeldOn, p)
					}
				}
				if len(ch.HeldOn) > 0 {
					ch.Status = "partial"
				}
			}
			if ch.Status == "missing" && !r.Optional {
				rep.OK = false
			}
			if r.Optional && dangerous {
				// An optional privilege that is dangerous (node_health's
				// Sys.Modify for pending updates) is never recommended:
				// its check says missing, and holding it is not excess
				// on the paths the operation uses (on / it still is).
				if neededOn[priv] == nil {
					neededOn[priv] = map[string]bool{}
				}
				neededOn[priv][path] = true
			} else if ch.Status != "held" {
				rep.addMissing(c.tokenID, ch)
			}
			rep.Checks = append(rep.Checks, ch)
		}
	}
	if len(skipped) > 0 {
		rep.Notes = append(rep.Notes, "not checked, because the node allowlist is empty and the policy refuses them: "+joinOps(skipped))
	}
	for _, p := range sortedKeys(acl) {
		for _, priv := range sortedKeys(acl[p]) {
			if needed[priv] || neededOn[priv][p] {
				continue
			}
			i := slices.IndexFunc(rep.Excess, func(e ExcessPrivilege) bool { return e.Privilege == priv })
			if i < 0 {
				risk, bad := dangerRisk(priv)
				rep.Excess = append(rep.Excess, ExcessPrivilege{Privilege: priv, Dangerous: bad, Risk: risk, Paths: []string{}})
				i = len(rep.Excess) - 1
				rep.Dangerous = rep.Dangerous || bad
			}
			if len(rep.Excess[i].Paths) < maxExcessPathList {
				rep.Excess[i].Paths = append(rep.Excess[i].Paths, p)
			}
		}
	}
	// Dangerous first, so a capped display shows what matters.
	slices.SortStableFunc(rep.Excess, func(a, b ExcessPrivilege) int {
		return b2i(b.Dangerous) - b2i(a.Dangerous)
	})
	slices.Sort(roleRequired)
	rep.RoleCommand = "pveum role add " + RoleName + " --privs " + shellQuote(strings.Join(roleRequired, ",")) +
		"   # or, if it exists: pveum role modify " + RoleName + " --privs " + shellQuote(strings.Join(roleRequired, ","))
	var optional []string
	for _, m := range rep.Missing {
		if m.Optional {
			optional = append(optional, m.Privileges...)
		}
	}
	if len(optional) > 0 {
		slices.Sort(optional)
		rep.OptionalRoleCommand = "pveum role add " + OptionalRoleName + " --privs " + shellQuote(strings.Join(slices.Compact(optional), ","))
	}
	if len(rep.Missing) > 0 {
		rep.Notes = append(rep.Notes, "create the role once with role_command, then run each missing grant's command and user_command (a privilege-separated token holds only what both it and its user hold)")
	}
	return rep
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// concretePaths expands a path template for the current policy.
func (c *Client) concretePaths(tmpl string) []string {
	switch tmpl {
	case pathNode:
		out := make([]string, 0, len(c.policy.nodeList))
		for _, n := range c.policy.nodeList {
			out = append(out, "/nodes/"+n)
		}
		return out
	case pathVMs:
		return []string{"/vms"}
	case pathStorage:
		return []string{"/storage"}
	}
	return []string{tmpl}
}

func (rep *PermissionsReport) addMissing(tokenID string, ch PrivilegeCheck) {
	i := slices.IndexFunc(rep.Missing, func(m MissingGrant) bool { return m.Path == ch.Path && m.Optional == ch.Optional })
	if i < 0 {
		user, _, _ := strings.Cut(tokenID, "!")
		role := RoleName
		if ch.Optional {
			role = OptionalRoleName
		}
		g := MissingGrant{
			Path: ch.Path, Optional: ch.Optional, Privileges: []string{}, Operations: []Operation{},
			Command:     "pveum acl modify " + ch.Path + " --tokens " + shellQuote(tokenID) + " --roles " + role,
			UserCommand: "pveum acl modify " + ch.Path + " --users " + shellQuote(user) + " --roles " + role,
		}
		if !strings.Contains(tokenID, "!") {
			// Ticket authentication: the principal is the user itself.
			g.Command, g.UserCommand = g.UserCommand, ""
		}
		rep.Missing = append(rep.Missing, g)
		i = len(rep.Missing) - 1
	}
	m := &rep.Missing[i]
	if !slices.Contains(m.Privileges, ch.Privilege) {
		m.Privileges = append(m.Privileges, ch.Privilege)
	}
	if !slices.Contains(m.Operations, ch.Operation) {
		m.Operations = append(m.Operations, ch.Operation)
	}
}

// shellQuote quotes s for a POSIX shell: token ids contain "!", which
// interactive shells expand inside double quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// joinOps renders operation names for a sentence.
func joinOps(ops []Operation) string {
	s := make([]string, len(ops))
	for i, op := range ops {
		s[i] = string(op)
	}
	return strings.Join(s, ", ")
}
