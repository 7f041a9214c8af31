package toolcard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

func tool(t *testing.T, name string) mcpserver.ToolInfo {
	t.Helper()
	for _, ti := range mcpserver.Tools(nil, nil) {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("no tool %s", name)
	return mcpserver.ToolInfo{}
}

func TestNearestNamesATypoNotAStranger(t *testing.T) {
	t.Parallel()
	tools := mcpserver.Tools(nil, nil)
	for in, want := range map[string]string{
		"list_guest":    "list_guests",
		"LIST_GUESTS":   "list_guests",
		"guest_stauts":  "guest_status",
		"snapshot_lst":  "snapshot_list",
		"reboot_planet": "",
		"x":             "",
	} {
		if got := Nearest(in, tools); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExampleArgsAreTheRequiredParameters(t *testing.T) {
	t.Parallel()
	got := ExampleArgs(mcpserver.ToolGuestPower, tool(t, mcpserver.ToolGuestPower).InputSchema)
	var args map[string]any
	if err := json.Unmarshal([]byte(got), &args); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	want := map[string]any{"node": "pve1", "type": "qemu", "vmid": float64(100), "action": "start"}
	if len(args) != len(want) {
		t.Fatalf("example %s, want exactly %v", got, want)
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("example %s: %s = %v, want %v", got, k, args[k], v)
		}
	}
	// A rule the schema cannot state: guest_config_set needs set or delete.
	if cs := ExampleArgs(mcpserver.ToolGuestConfigSet, tool(t, mcpserver.ToolGuestConfigSet).InputSchema); !strings.Contains(cs, `"set":{"cores":"2"}`) {
		t.Errorf("guest_config_set example %s lacks set", cs)
	}
}

func TestPrintShowsParametersApprovalAndExample(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Print(&b, tool(t, mcpserver.ToolGuestPower))
	out := b.String()
	for _, want := range []string{
		"guest_power (power)",
		"  action (string, required): one of start, shutdown, reboot, stop",
		"  approval (string, optional)",
		"Approval phrase: APPROVE <action> <node>/<type>/<vmid>",
		"Proxmox privileges: ",
		"  proxmox-safe-mcp call guest_power '{",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("card lacks %q:\n%s", want, out)
		}
	}
	if ClassName(tool(t, mcpserver.ToolListGuests)) != "read" {
		t.Error("a read's class is not shown as read")
	}
	if l := ListingOf(tool(t, mcpserver.ToolGuestPower)); l.Class != "power" || l.InputSchema == nil || l.Summary == "" {
		t.Errorf("listing %+v", l)
	}
}
