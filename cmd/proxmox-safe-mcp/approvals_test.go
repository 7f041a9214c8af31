package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/settings"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestApprovalsProfileDefaults: the safe profile keeps the phrase when
// PROXMOX_SAFE_APPROVALS is unset (existing users do not break); with
// power=elicit a client that cannot elicit (the call command) is refused
// with what to do, power=elicit,phrase falls back to the phrase and
// power=elicit,grant to a grant code. An
// unknown class is refused at start, naming the setting.
func TestApprovalsProfileDefaults(t *testing.T) {
	t.Parallel()
	args := `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100"}`
	audit := func() string { return filepath.Join(t.TempDir(), "audit.jsonl") }
	none := map[string]string{}

	if out, errOut, code := runIn(t, none, "--demo", "--audit-log", audit(), "call", "guest_power", args); code != 0 || !strings.Contains(out, "UPID:") {
		t.Fatalf("default (phrase): exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code := runIn(t, map[string]string{"PROXMOX_SAFE_APPROVALS": "power=elicit"}, "--demo", "--audit-log", audit(), "call", "guest_power", args)
	if code == 0 || strings.Contains(out, "UPID:") || !strings.Contains(out+errOut, "elicitation capability") {
		t.Fatalf("elicit only, client without elicitation: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := runIn(t, none, "--demo", "--approvals", "power=elicit,phrase", "--audit-log", audit(), "call", "guest_power", args); code != 0 || !strings.Contains(out, "UPID:") {
		t.Fatalf("elicit,phrase: exit %d\n%s\n%s", code, out, errOut)
	}
	// elicit,grant: a client that cannot elicit gets a grant code, not the
	// phrase (the phrase is not a level this class allows).
	grants := map[string]string{"PROXMOX_SAFE_GRANT_DIR": t.TempDir()}
	out, errOut, code = runIn(t, grants, "--demo", "--approvals", "power=elicit,grant", "--audit-log", audit(), "call", "guest_power", args)
	if code == 0 || strings.Contains(out, "UPID:") || !strings.Contains(out+errOut, "proxmox-safe-mcp approve ") {
		t.Fatalf("elicit,grant without elicitation: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = runIn(t, none, "--demo", "--approvals", "teleport=elicit", "--audit-log", audit(), "call", "list_guests")
	if code == 0 || !strings.Contains(errOut, "Approvals") || !strings.Contains(errOut, `unknown mutation class "teleport"`) {
		t.Fatalf("unknown class: exit %d\n%s", code, errOut)
	}
}

// TestApprovalLevelsShown: the demo banner and doctor show the levels in
// force for each enabled class, --approvals included (the banner used to
// promise the phrase whatever --approvals said), and what each level
// needs; the banner names the demo's grant directory for approve.
func TestApprovalLevelsShown(t *testing.T) {
	t.Parallel()
	none := map[string]string{}
	_, banner, code := runIn(t, none, "--demo", "--profile", "admin", "--approvals", "power=elicit,grant")
	if code != 0 {
		t.Fatalf("serve: exit %d\n%s", code, banner)
	}
	for _, want := range []string{
		"power           elicit, grant", "snapshot        phrase", "snapshot-admin  phrase", "power-extra     phrase",
		`phrase: pass the exact approval phrase, e.g. "APPROVE shutdown pve1/qemu/100"`,
		"elicit: your MCP client shows the plan", "PROXMOX_SAFE_GRANT_DIR=",
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	_, banner, _ = runIn(t, none, "--demo", "--approvals", "power=elicit;snapshot=elicit")
	if strings.Contains(banner, "phrase") || !strings.Contains(banner, "power           elicit") {
		t.Errorf("elicit only: the banner still speaks of the phrase:\n%s", banner)
	}
	_, banner, _ = runIn(t, none, "--demo", "--profile", "responder")
	if !strings.Contains(banner, "responder       none") || !strings.Contains(banner, "none: no approval") {
		t.Errorf("responder banner:\n%s", banner)
	}
	out, errOut, code := runIn(t, none, "--demo", "--profile", "admin", "--approvals", "power=elicit,grant", "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"approvals: power=elicit,grant; snapshot=phrase; snapshot-admin=phrase; power-extra=phrase",
		"phrase: a floor", "elicit: the key is made at every start", "grant: the operator runs proxmox-safe-mcp approve CODE",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
}

// TestAdminProfileDefaults: the admin profile with no approvals setting
// starts (every class's default levels have their approvers, grant store
// included, also for classes whose default is elicit,grant) and refuses a
// mutation without approval, sending nothing; the grant directory beside
// the audit log is created 0700 when a class can use grants.
func TestAdminProfileDefaults(t *testing.T) {
	t.Parallel()
	args := `{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown"}`
	out, errOut, code := runIn(t, map[string]string{}, "--demo", "--profile", "admin", "--audit-log", filepath.Join(t.TempDir(), "audit.jsonl"), "call", "guest_power", args)
	if code == 0 || strings.Contains(out, "UPID:") || !strings.Contains(out+errOut, "no action was taken") {
		t.Fatalf("admin defaults, no approval: exit %d\n%s\n%s", code, out, errOut)
	}
	// A class set to grant outside the demo: the store lives beside the
	// audit log.
	dir := t.TempDir()
	// (destroy, whose default is elicit,grant, set to grant here).
	c := &settings.Config{AuditLog: filepath.Join(dir, "audit.jsonl"), Command: settings.CmdServe,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassSnapshotAdmin: {proxmoxsafe.LevelGrant}, proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelGrant}}}
	classes, _ := proxmoxsafe.ProfileAdmin.Classes()
	aps, err := approvers(c, classes, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	names := ""
	for _, a := range aps {
		names += a.Name() + " "
	}
	if names != "elicit grant " {
		t.Errorf("approvers %q, want elicit and grant", names)
	}
	if fi, err := os.Stat(filepath.Join(dir, "grants")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("grant directory: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, settings.ElicitKeyName)); !os.IsNotExist(err) {
		t.Errorf("an elicitation key was made though no class uses elicit: %v", err)
	}
	// A class that uses elicit outside the demo gets the persistent key
	// beside the audit log.
	c.Approvals[proxmoxsafe.ClassPower] = []proxmoxsafe.ApprovalLevel{proxmoxsafe.LevelElicit}
	if _, err := approvers(c, classes, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, settings.ElicitKeyName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("elicitation key beside the audit log: %v %v", fi, err)
	}
}
