package mcpserver

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestMutationToolAnswers: each mutation tool names what it does in its
// answer. The plan's answer (plan: true) goes through the same words as a
// receipt's, so every tool's wording is checked without sending anything.
func TestMutationToolAnswers(t *testing.T) {
	t.Parallel()
	pol := everyClassPolicy()
	f := newFixture(t, t.Context(), "", fixtureConfig{policy: &pol})
	suspendInMemory := map[string]any{"node": "pve1", "type": "qemu", "vmid": 100}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolGuestPower, nil, "Plan only for the stop of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolSnapshotGuest, nil, "Plan only for the snapshot plan_check of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolGuestSuspend, nil, "Plan only for the suspend to disk of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolGuestSuspend, suspendInMemory, "Plan only for the suspend of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolGuestResume, nil, "Plan only for the resume of VM 104 (kiosk) on pve2, nothing was changed"},
		{ToolSnapshotRollback, nil, "Plan only for the rollback of VM 100 (web-01) on pve1 to snapshot pre-upgrade, nothing was changed"},
		{ToolSnapshotDelete, nil, "Plan only for the deletion of snapshot weekly-2025-01 of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolDiskResize, nil, "Plan only for the resize of scsi0 64G → 74G of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolGuestConfigSet, nil, "Plan only for the config change (cores 4 → 8, description sha256:bcb0a106a25cb490 → sha256:9b0f1b10aff55228, delete tags) of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolVMStart, nil, "Plan only for the start of VM 107 (staging-app) on pve3, nothing was changed"},
		{ToolVMReboot, nil, "Plan only for the reboot of VM 100 (web-01) on pve1, nothing was changed"},
		{ToolVMReset, nil, "Plan only for the reset of VM 106 (monitoring) on pve3, nothing was changed"},
		{ToolGuestMigrate, nil, "Plan only for the migration of VM 100 (web-01) on pve1 to node pve2, nothing was changed"},
		{ToolAPIRequest, nil, "Plan only, nothing was sent: POST /nodes/pve1/qemu/100/snapshot; approve with exactly:\nAPPROVE POST /nodes/pve1/qemu/100/snapshot params="},
		{ToolGuestDestroy, nil, "Plan only for the destroy of VM 103 (build-runner) on pve2, nothing was changed"},
		{ToolGuestClone, nil, "Plan only for the clone of VM 105 (debian-13) on pve2 as VM 150 on pve2, nothing was changed"},
		{ToolVMCreate, nil, "Plan only for the creation of VM 151 on pve1 (app1, 2 cores, 2048 MiB), nothing was changed"},
		{ToolContainerCreate, nil, "Plan only for the creation of container 152 on pve1 (c1), nothing was changed"},
	} {
		args := tc.args
		if args == nil {
			args = planRefusalArgs[tc.tool]
		}
		res := f.call(t, t.Context(), tc.tool, with(args, "plan", true))
		if got := text(t, res); res.IsError || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: IsError=%v, text\n%s\nwant it to begin with\n%s", tc.tool, res.IsError, got, tc.want)
		}
	}
	if m := f.fake.MutatingRequests(); len(m) != 0 {
		for _, r := range m {
			if !strings.HasSuffix(r.Path, "/agent/ping") { // vm_reset's precondition
				t.Errorf("mutating request: %s %s", r.Method, r.Path)
			}
		}
	}
}

// readOnlyArgs are valid arguments for every tool that changes something.
func readOnlyArgs(tool string) map[string]any {
	if tool == ToolSnapshotCleanup {
		return map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "apply": true}
	}
	return planRefusalArgs[tool]
}

// TestReadOnlyHandlersRefuse checks the handlers themselves, for a server
// that registered them despite read-only mode (New and AddTools leave them
// out): every tool that is not read-only refuses before the library is
// called, so Proxmox sees no request at all.
func TestReadOnlyHandlersRefuse(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	client := newClient(t, fake, everyClassPolicy(), "", newMemAudit(), nil)
	server := mcp.NewServer(&mcp.Implementation{Name: "by-hand", Version: "v0"}, nil)
	a := &adapter{client: client, readOnly: true, log: slog.New(slog.DiscardHandler)}
	var names []string
	for _, d := range toolList() {
		if !d.info.ReadOnly() {
			d.register(server, d.served(client.MaxWait()), a)
			names = append(names, d.info.Name)
		}
	}
	cs := connect(t, t.Context(), server, "")
	for _, name := range names {
		args := readOnlyArgs(name)
		if args == nil {
			t.Errorf("%s: no arguments in planRefusalArgs or readOnlyArgs", name)
			continue
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError || !strings.Contains(text(t, res), "read-only mode") {
			t.Errorf("%s in read-only mode: IsError=%v %s", name, res.IsError, text(t, res))
		}
	}
	if len(names) < len(planRefusalArgs) {
		t.Errorf("only %d tools change something, planRefusalArgs has %d", len(names), len(planRefusalArgs))
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached Proxmox", n)
	}
}
