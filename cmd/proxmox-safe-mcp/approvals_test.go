package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestParseApprovals: PROXMOX_SAFE_APPROVALS is read into per-class levels
// in order; malformed values are refused with a message naming the problem.
func TestParseApprovals(t *testing.T) {
	t.Parallel()
	c := &config{}
	if err := parseApprovals(c, " power=elicit, phrase ; snapshot=elicit;"); err != nil {
		t.Fatal(err)
	}
	want := map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{
		proxmoxsafe.ClassPower:    {proxmoxsafe.LevelElicit, proxmoxsafe.LevelPhrase},
		proxmoxsafe.ClassSnapshot: {proxmoxsafe.LevelElicit},
	}
	if !reflect.DeepEqual(c.Approvals, want) {
		t.Errorf("got %v, want %v", c.Approvals, want)
	}
	for in, msg := range map[string]string{
		"power":                    "is not CLASS=LEVEL",
		"power=":                   "is not CLASS=LEVEL",
		"=elicit":                  "is not CLASS=LEVEL",
		"power=elicit;power=none":  "listed twice",
		"power=token":              `unknown approval level "token"`,
		"power=elicit,,phrase":     `unknown approval level ""`,
		"snapshot=ELICIT":          `unknown approval level "ELICIT"`,
		"power=elicit;snapshot=pw": `unknown approval level "pw"`,
	} {
		if err := parseApprovals(&config{}, in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want one saying %q", in, err, msg)
		}
	}
}

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
