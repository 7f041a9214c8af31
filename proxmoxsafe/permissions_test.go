package proxmoxsafe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// wellScoped is exactly what the default test policy (pve1, pve2; power
// and snapshot) needs, backups included.
func wellScoped() map[string][]string {
	return map[string][]string{
		"/":        {"Sys.Audit"},
		"/vms":     {"VM.Audit", "VM.PowerMgmt", "VM.Snapshot", "VM.Backup", "VM.GuestAgent.Audit"},
		"/storage": {"Datastore.Audit", "Datastore.AllocateSpace"},
	}
}

func permEnv(t *testing.T, privs map[string][]string, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	c := testCluster()
	c.Tokens["automation@pve!mcp"].Privileges = privs
	return newEnvWith(t, c, mod)
}

func TestPermissionsWellScoped(t *testing.T) {
	t.Parallel()
	e := permEnv(t, wellScoped(), nil)
	rep, err := e.client.Permissions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The map is the token's own (no userid); the release is read beside it.
	if got := slices.Sorted(slices.Values(reqLines(e.requests()))); !slices.Equal(got, []string{"GET /access/permissions", "GET /version"}) || len(e.requests()[0].Query) != 0 {
		t.Errorf("requests = %v (no userid: the token's own map)", got)
	}
	if !rep.OK || len(rep.Missing) != 0 || len(rep.Excess) != 0 || rep.Dangerous {
		t.Errorf("report = %+v", rep)
	}
	for _, ch := range rep.Checks {
		// node_health's Sys.Modify (pending updates) is optional and
		// dangerous: a well-scoped token lacks it, and is not told to get it.
		if ch.Status != "held" && !(ch.Optional && ch.Privilege == "Sys.Modify") {
			t.Errorf("check %+v", ch)
		}
	}
	// Node paths are checked per allowlisted node, inherited from "/".
	if !slices.ContainsFunc(rep.Checks, func(c proxmoxsafe.PrivilegeCheck) bool {
		return c.Operation == "NodeStatus" && c.Path == "/nodes/pve2" && c.Status == "held"
	}) {
		t.Errorf("NodeStatus on /nodes/pve2 not checked: %+v", rep.Checks)
	}
	if !slices.Contains(rep.Operations, "GuestPower") || !slices.Contains(rep.Operations, "SnapshotGuest") {
		t.Errorf("operations = %v", rep.Operations)
	}
	if rep.TokenID != "automation@pve!mcp" || !strings.Contains(rep.RoleCommand, "'Datastore.Audit,Sys.Audit,VM.Audit,VM.PowerMgmt,VM.Snapshot'") {
		t.Errorf("role command = %q", rep.RoleCommand)
	}
}

func TestPermissionsOverPrivileged(t *testing.T) {
	t.Parallel()
	e := permEnv(t, map[string][]string{"/": proxmoxtest.AllPrivileges()}, nil)
	rep, err := e.client.Permissions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || !rep.Dangerous || len(rep.Missing) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	excess := map[string]proxmoxsafe.ExcessPrivilege{}
	for _, x := range rep.Excess {
		excess[x.Privilege] = x
	}
	for _, p := range []string{"Permissions.Modify", "Sys.Modify", "VM.Allocate", "Sys.PowerMgmt", "Sys.Console", "VM.Console",
		"Realm.Allocate", "Realm.AllocateUser", "User.Modify", "VM.GuestAgent.FileWrite", "Datastore.Allocate", "Datastore.AllocateTemplate"} {
		if x, ok := excess[p]; !ok || !x.Dangerous || x.Risk == "" || !slices.Equal(x.Paths, []string{"/"}) {
			t.Errorf("%s: %+v (present %v)", p, x, ok)
		}
	}
	if x := excess["Pool.Audit"]; x.Dangerous {
		t.Errorf("Pool.Audit flagged dangerous")
	}
	if _, ok := excess["VM.PowerMgmt"]; ok {
		t.Error("a needed privilege is reported as excess")
	}
	if !rep.Excess[0].Dangerous {
		t.Error("dangerous privileges are not listed first")
	}
}

func TestPermissionsMissing(t *testing.T) {
	t.Parallel()
	e := permEnv(t, map[string][]string{"/vms": {"VM.Audit"}, "/vms/100": {"VM.PowerMgmt"}, "/nodes/pve1": {"Sys.Audit"}}, nil)
	rep, err := e.client.Permissions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatal("report says OK")
	}
	status := map[string]proxmoxsafe.PrivilegeCheck{}
	for _, c := range rep.Checks {
		status[string(c.Operation)+" "+c.Path+" "+c.Privilege] = c
	}
	for key, want := range map[string]string{
		"NodeStatus /nodes/pve1 Sys.Audit":     "held",
		"NodeStatus /nodes/pve2 Sys.Audit":     "missing",
		"ListGuests /vms VM.Audit":             "held",
		"GuestPower /vms VM.PowerMgmt":         "partial",
		"SnapshotGuest /vms VM.Snapshot":       "missing",
		"ClusterStatus / Sys.Audit":            "missing",
		"ListBackups /vms VM.Backup":           "missing",
		"ListStorage /storage Datastore.Audit": "missing",
	} {
		if status[key].Status != want {
			t.Errorf("%s: %+v, want %s", key, status[key], want)
		}
	}
	if held := status["GuestPower /vms VM.PowerMgmt"].HeldOn; !slices.Equal(held, []string{"/vms/100"}) {
		t.Errorf("partial held on %v", held)
	}
	grants := map[string]proxmoxsafe.MissingGrant{}
	for _, m := range rep.Missing {
		if !m.Optional {
			grants[m.Path] = m
		}
	}
	g := grants["/nodes/pve2"]
	if g.Command != "pveum acl modify /nodes/pve2 --tokens 'automation@pve!mcp' --roles ProxmoxSafeMCP" ||
		g.UserCommand != "pveum acl modify /nodes/pve2 --users 'automation@pve' --roles ProxmoxSafeMCP" {
		t.Errorf("grant = %+v", g)
	}
	if g := grants["/vms"]; !slices.Equal(g.Privileges, []string{"VM.PowerMgmt", "VM.Snapshot"}) {
		t.Errorf("/vms grant = %+v", g)
	}
	if rep.OptionalRoleCommand == "" || !strings.Contains(rep.OptionalRoleCommand, "VM.Backup") {
		t.Errorf("optional role = %q", rep.OptionalRoleCommand)
	}
}

func TestPermissionsFollowPolicy(t *testing.T) {
	t.Parallel()
	e := permEnv(t, map[string][]string{"/": {"Sys.Audit"}, "/vms": {"VM.Audit", "VM.PowerMgmt"}, "/storage": {"Datastore.Audit"}},
		func(c *proxmoxsafe.Config) {
			c.Policy = proxmoxsafe.Policy{ReadOnly: true} // no nodes, no classes
		})
	rep, err := e.client.Permissions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rep.Operations, "GuestPower") || !rep.OK {
		t.Errorf("read-only report = %+v", rep)
	}
	// Node-targeted operations are unusable without allowlisted nodes.
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "NodeStatus") {
		t.Errorf("notes = %v", rep.Notes)
	}
	// VM.PowerMgmt is not needed in read-only mode: excess, not dangerous.
	if len(rep.Excess) != 1 || rep.Excess[0].Privilege != "VM.PowerMgmt" || rep.Excess[0].Dangerous || rep.Dangerous {
		t.Errorf("excess = %+v", rep.Excess)
	}
	rep, err = e.client.PermissionsFor(t.Context(), []proxmoxsafe.Operation{"CephStatus"})
	if err != nil || !slices.Equal(rep.Operations, []proxmoxsafe.Operation{"CephStatus"}) || len(rep.Checks) != 1 {
		t.Errorf("PermissionsFor = %+v, %v", rep, err)
	}
}

// TestPermissionsOptionalDangerous: node_health's Sys.Modify (pending
// updates) is never recommended to a token that lacks it, and held on an
// allowlisted node it is not excess; held on / it still is.
func TestPermissionsOptionalDangerous(t *testing.T) {
	t.Parallel()
	privs := wellScoped()
	privs["/nodes/pve1"] = []string{"Sys.Modify"}
	rep, err := permEnv(t, privs, nil).client.Permissions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || len(rep.Missing) != 0 || rep.OptionalRoleCommand != "" || len(rep.Excess) != 0 || rep.Dangerous {
		t.Errorf("Sys.Modify on /nodes/pve1: %+v", rep)
	}
	if !slices.ContainsFunc(rep.Checks, func(c proxmoxsafe.PrivilegeCheck) bool {
		return c.Operation == proxmoxsafe.OpNodeHealth && c.Path == "/nodes/pve1" && c.Privilege == "Sys.Modify" && c.Status == "held"
	}) {
		t.Errorf("checks = %+v", rep.Checks)
	}
	privs = wellScoped()
	privs["/"] = append(privs["/"], "Sys.Modify")
	rep, err = permEnv(t, privs, nil).client.Permissions(t.Context())
	if err != nil || !rep.Dangerous || len(rep.Excess) != 1 || rep.Excess[0].Privilege != "Sys.Modify" {
		t.Errorf("Sys.Modify on /: %+v, %v", rep, err)
	}
}

// TestPermissionsAgentPrivilegeByRelease: PVE 7 and 8 check VM.Monitor
// where PVE 9 checks VM.GuestAgent.Audit, and know no VM.GuestAgent.*
// privilege (a role naming one is refused), so the report follows the
// release it reads beside the map.
func TestPermissionsAgentPrivilegeByRelease(t *testing.T) {
	t.Parallel()
	onRelease := func(version string, privs map[string][]string, classes ...proxmoxsafe.Class) (*proxmoxsafe.PermissionsReport, *env) {
		t.Helper()
		c := testCluster()
		c.Version = version
		c.Tokens["automation@pve!mcp"].Privileges = privs
		e := newEnvWith(t, c, func(cfg *proxmoxsafe.Config) { cfg.Policy.Classes = append(cfg.Policy.Classes, classes...) })
		rep, err := e.client.Permissions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return rep, e
	}
	agentChecks := func(rep *proxmoxsafe.PermissionsReport) map[string]proxmoxsafe.PrivilegeCheck {
		out := map[string]proxmoxsafe.PrivilegeCheck{}
		for _, ch := range rep.Checks {
			if ch.Operation == proxmoxsafe.OpGuestAgentInfo || ch.Operation == proxmoxsafe.OpGuestAddresses || ch.Operation == proxmoxsafe.OpResetGuest {
				if ch.Privilege != "VM.Audit" && ch.Privilege != "VM.PowerMgmt" {
					out[string(ch.Operation)] = ch
				}
			}
		}
		return out
	}

	// PVE 8.4, VM.Monitor held where PVE 9 wants VM.GuestAgent.Audit.
	privs := wellScoped()
	privs["/vms"] = []string{"VM.Audit", "VM.PowerMgmt", "VM.Snapshot", "VM.Backup", "VM.Monitor"}
	rep, e := onRelease("8.4.1", privs)
	got := slices.Sorted(slices.Values(reqLines(e.requests())))
	if !slices.Equal(got, []string{"GET /access/permissions", "GET /version"}) {
		t.Errorf("requests = %v", got)
	}
	checks := agentChecks(rep)
	for _, op := range []proxmoxsafe.Operation{proxmoxsafe.OpGuestAgentInfo, proxmoxsafe.OpGuestAddresses} {
		ch := checks[string(op)]
		if ch.Privilege != "VM.Monitor" || ch.Status != "held" || !strings.Contains(ch.Note, "PVE 8 checks VM.Monitor") {
			t.Errorf("PVE 8.4 %s: %+v", op, ch)
		}
	}
	if !rep.OK || len(rep.Missing) != 0 || len(rep.Excess) != 0 || rep.Dangerous {
		t.Errorf("PVE 8.4 with VM.Monitor: %+v", rep)
	}

	// PVE 8.4 with the reset (which needs the agent ping) and no VM.Monitor:
	// the required grant names VM.Monitor, never a PVE 9 privilege.
	rep, _ = onRelease("8.4.1", wellScoped(), proxmoxsafe.ClassResponder)
	if ch := agentChecks(rep)[string(proxmoxsafe.OpResetGuest)]; ch.Privilege != "VM.Monitor" || ch.Status != "missing" || ch.Optional {
		t.Errorf("PVE 8.4 reset: %+v", ch)
	}
	if rep.OK || !strings.Contains(rep.RoleCommand, "VM.Monitor") || strings.Contains(rep.RoleCommand+rep.OptionalRoleCommand, "VM.GuestAgent") {
		t.Errorf("PVE 8.4 role commands: %q / %q", rep.RoleCommand, rep.OptionalRoleCommand)
	}

	// PVE 9.1: the agent privilege as declared.
	rep, _ = onRelease("9.1.1", wellScoped(), proxmoxsafe.ClassResponder)
	if ch := agentChecks(rep)[string(proxmoxsafe.OpResetGuest)]; ch.Privilege != "VM.GuestAgent.Audit" || ch.Status != "held" {
		t.Errorf("PVE 9.1 reset: %+v", ch)
	}
	if !rep.OK || strings.Contains(rep.RoleCommand, "VM.Monitor") {
		t.Errorf("PVE 9.1: %+v", rep)
	}
}
