package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// toolCase is what this package's tests know of one tool: one row per
// tool in toolCases, so a new tool gets its fixtures in one place
// (TestToolCasesComplete fails until it has its row).
type toolCase struct {
	// hints are the tool's four annotations (TestAnnotations).
	hints hints
	// valid are arguments the tool's schema and the library accept; the
	// differential test (TestSchemaMatchesValidator) varies one property
	// at a time from them. nil: the tool takes no arguments.
	valid map[string]any
	// plan, for a tool that changes something, are arguments it accepts on
	// the demo cluster up to the approval (every precondition holds):
	// TestRefusalCarriesPlan, TestMutationToolAnswers and
	// TestReadOnlyHandlersRefuse call it with them.
	plan map[string]any
	// planless: the tool has no single request to plan (snapshot_cleanup's
	// dry run, apply omitted, is its plan, and its approval refusal carries
	// none); plan then holds arguments that change something.
	planless bool
	// planAnswer is how the answer to plan with plan: true begins: the
	// plan goes through the same words as a receipt (TestMutationToolAnswers).
	planAnswer string
}

// hints are a tool's four annotations.
type hints struct{ readOnly, destructive, idempotent, openWorld bool }

// toolCases has one row per tool, in listing order.
var toolCases = map[string]toolCase{
	ToolClusterStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
	},
	ToolNodeStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1"},
	},
	ToolListGuests: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{},
	},
	ToolGuestPower: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "action": "stop"},
		planAnswer: "Plan only for the stop of VM 100 (web-01) on pve1, nothing was changed",
	},
	ToolSnapshotGuest: {
		hints:      hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "s1"},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "plan_check", "description": "before the change", "vmstate": true},
		planAnswer: "Plan only for the snapshot plan_check of VM 100 (web-01) on pve1, nothing was changed",
	},
	ToolGuestStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
	},
	ToolGuestConfig: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
	},
	ToolSnapshotList: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
	},
	ToolTaskStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "upid": "UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:"},
	},
	ToolTaskList: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1"},
	},
	// Infrastructure reads.
	ToolStorageList: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{},
	},
	ToolBackupList: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "storage": "local"},
	},
	ToolBackupCoverage: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"max_age_days": 3, "vmid": 100, "limit": 10},
	},
	ToolBackupJobs: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"id": "backup-nightly"},
	},
	ToolCephStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
	},
	ToolHAStatus: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
	},
	ToolNodeHealth: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1"},
	},
	ToolHealthReport: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "min_severity": "warning", "limit": 10},
	},
	ToolPermissionsCheck: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
	},
	ToolGuestAddresses: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "tag": "web", "limit": 10},
	},
	ToolGuestAgentInfo: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "vmid": 100},
	},
	ToolMetricsHistory: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "timeframe": "day", "cf": "MAX"},
	},
	ToolMetricsChart: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"node": "pve1", "timeframe": "week"},
	},
	// Responder tools.
	ToolVMStart: {
		hints:      hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
		plan:       map[string]any{"node": "pve3", "type": "qemu", "vmid": 107},
		planAnswer: "Plan only for the start of VM 107 (staging-app) on pve3, nothing was changed",
	},
	ToolVMReboot: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "lxc", "vmid": 100},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
		planAnswer: "Plan only for the reboot of VM 100 (web-01) on pve1, nothing was changed",
	},
	ToolVMReset: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
		plan:       map[string]any{"node": "pve3", "type": "qemu", "vmid": 106},
		planAnswer: "Plan only for the reset of VM 106 (monitoring) on pve3, nothing was changed",
	},
	ToolSnapshotCleanup: {
		hints:    hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:    map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
		plan:     map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "apply": true},
		planless: true,
	},
	// Admin tools: a suspend stops the guest's service.
	ToolGuestSuspend: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "todisk": true},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "todisk": true},
		planAnswer: "Plan only for the suspend to disk of VM 100 (web-01) on pve1, nothing was changed",
	},
	ToolGuestResume: {
		hints:      hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100},
		plan:       map[string]any{"node": "pve2", "type": "qemu", "vmid": 104},
		planAnswer: "Plan only for the resume of VM 104 (kiosk) on pve2, nothing was changed",
	},
	ToolSnapshotRollback: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "lxc", "vmid": 100, "snapname": "s1", "start": true},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "pre-upgrade", "start": true},
		planAnswer: "Plan only for the rollback of VM 100 (web-01) on pve1 to snapshot pre-upgrade, nothing was changed",
	},
	ToolSnapshotDelete: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "s1", "force": true},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "snapname": "weekly-2025-01"},
		planAnswer: "Plan only for the deletion of snapshot weekly-2025-01 of VM 100 (web-01) on pve1, nothing was changed",
	},
	// The gateway: a GET changes nothing; a write
	// can do anything the deny list leaves.
	ToolAPIGet: {
		hints: hints{readOnly: true, destructive: false, idempotent: true, openWorld: false},
		valid: map[string]any{"path": "/cluster/options", "params": map[string]any{"type": "vm"}},
	},
	ToolAPIRequest: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"method": "POST", "path": "/cluster/ha/groups", "params": map[string]any{"group": "g1"}, "approval": "APPROVE POST /cluster/ha/groups params=0123456789abcdef", "plan": true},
		plan:       map[string]any{"method": "POST", "path": "/nodes/pve1/qemu/100/firewall/rules", "params": map[string]any{"action": "ACCEPT", "comment": "via the gateway"}},
		planAnswer: "Plan only, nothing was sent: POST /nodes/pve1/qemu/100/firewall/rules; approve with exactly:\nAPPROVE POST /nodes/pve1/qemu/100/firewall/rules params=",
	},
	ToolBackupCreate: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "storage": "local", "mode": "stop", "compress": "none", "notes": "n {{vmid}}", "protected": true},
		plan:       map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "storage": "local"},
		planAnswer: "Plan only for the backup of VM 103 (build-runner) on pve2, nothing was changed",
	},
	ToolBackupRestore: {
		hints:      hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "archive": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", "vmid": 150, "storage": "local-lvm", "keep_mac_addresses": true},
		plan:       map[string]any{"node": "pve1", "archive": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst", "vmid": 150},
		planAnswer: "Plan only for the restore of local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst as VM 150 on pve1, nothing was changed",
	},
	ToolBackupDelete: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "volume": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"},
		plan:       map[string]any{"node": "pve1", "volume": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst"},
		planAnswer: "Plan only for the deletion of backup local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst, nothing was changed",
	},
	// The destroy class.
	ToolGuestDestroy: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "purge": true, "destroy_unreferenced_disks": false},
		plan:       map[string]any{"node": "pve2", "type": "qemu", "vmid": 103, "purge": true, "destroy_unreferenced_disks": false},
		planAnswer: "Plan only for the destroy of VM 103 (build-runner) on pve2, nothing was changed",
	},
	// Provision tools: they create, destroy nothing.
	ToolGuestClone: {
		hints: hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid: map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "newid": 123, "target": "pve2", "storage": "ceph", "name": "web2",
			"pool": "dev", "description": "d"},
		plan:       map[string]any{"node": "pve2", "type": "qemu", "vmid": 105, "newid": 150, "name": "web-03", "description": "from the template"},
		planAnswer: "Plan only for the clone of VM 105 (debian-13) on pve2 as VM 150 on pve2, nothing was changed",
	},
	ToolVMCreate: {
		hints: hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid: map[string]any{"node": "pve1", "vmid": 130, "name": "web9", "cores": 2, "sockets": 1, "memory": 2048, "ostype": "l26",
			"disk_storage": "local-lvm", "disk_size_gib": 32, "bridge": "vmbr0", "net_model": "virtio", "iso": "local:iso/debian-13.iso", "pool": "dev", "description": "d"},
		plan: map[string]any{"node": "pve1", "vmid": 151, "name": "app1", "cores": 2, "memory": 2048, "disk_storage": "local-lvm", "disk_size_gib": 20,
			"bridge": "vmbr0", "iso": proxmoxtest.DemoISO},
		planAnswer: "Plan only for the creation of VM 151 on pve1 (app1, 2 cores, 2048 MiB), nothing was changed",
	},
	ToolContainerCreate: {
		hints: hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid: map[string]any{"node": "pve1", "vmid": 140, "ostemplate": "local:vztmpl/debian-13-standard_13.1-1_amd64.tar.zst", "hostname": "c1",
			"cores": 1, "memory": 512, "swap": 256, "rootfs_storage": "local-lvm", "rootfs_size_gib": 8, "bridge": "vmbr0", "ip": "192.0.2.10/24",
			"gateway": "192.0.2.1", "ssh_public_keys": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7yT0b5X4JmEqwG0w3uHcYlOqz2w0u1n1y5Kq3bQZpA k", "pool": "dev", "description": "d"},
		plan: map[string]any{"node": "pve1", "vmid": 152, "ostemplate": proxmoxtest.DemoTemplate, "hostname": "c1", "cores": 1, "memory": 512,
			"rootfs_storage": "local-lvm", "rootfs_size_gib": 8, "bridge": "vmbr0", "ip": "dhcp"},
		planAnswer: "Plan only for the creation of container 152 on pve1 (c1), nothing was changed",
	},
	// A migration can stop a container (restart mode) and moves disks.
	ToolGuestMigrate: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "lxc", "vmid": 100, "target": "pve2", "restart": true, "timeout": 60},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "target": "pve2", "online": true},
		planAnswer: "Plan only for the migration of VM 100 (web-01) on pve1 to node pve2, nothing was changed",
	},
	// The config class: growing a disk loses nothing;
	// setting keys overwrites or deletes values.
	ToolDiskResize: {
		hints:      hints{readOnly: false, destructive: false, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "disk": "scsi0", "size": "+10G"},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "disk": "scsi0", "size": "+10G"},
		planAnswer: "Plan only for the resize of scsi0 64G → 74G of VM 100 (web-01) on pve1, nothing was changed",
	},
	ToolGuestConfigSet: {
		hints:      hints{readOnly: false, destructive: true, idempotent: false, openWorld: false},
		valid:      map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "set": map[string]any{"cores": "4"}, "delete": []any{"tags"}},
		plan:       map[string]any{"node": "pve1", "type": "qemu", "vmid": 100, "set": map[string]any{"cores": "8", "description": "planned"}, "delete": []any{"tags"}},
		planAnswer: "Plan only for the config change (cores 4 → 8, description sha256:bcb0a106a25cb490 → sha256:9b0f1b10aff55228, delete tags) of VM 100 (web-01) on pve1, nothing was changed",
	},
}

// TestToolCasesComplete: toolCases has a row for every tool and none for a
// tool that does not exist, and each row has what its tool needs.
func TestToolCasesComplete(t *testing.T) {
	t.Parallel()
	tools := map[string]ToolInfo{}
	for _, ti := range Tools(nil, nil) {
		tools[ti.Name] = ti
		tc, ok := toolCases[ti.Name]
		switch {
		case !ok:
			t.Errorf("%s has no row in toolCases (mcpserver/tools_test.go)", ti.Name)
		case tc.valid == nil && len(ti.InputSchema.Properties) > 0:
			t.Errorf("%s takes arguments but its row has no valid arguments", ti.Name)
		case !ti.ReadOnly() && tc.plan == nil:
			t.Errorf("%s changes something but its row has no plan arguments: add arguments that pass every check up to the approval", ti.Name)
		case !ti.ReadOnly() && !tc.planless && tc.planAnswer == "":
			t.Errorf("%s: its row has no planAnswer", ti.Name)
		case ti.ReadOnly() && (tc.plan != nil || tc.planAnswer != ""):
			t.Errorf("%s is read-only but its row has plan arguments", ti.Name)
		}
	}
	for name := range toolCases {
		if _, ok := tools[name]; !ok {
			t.Errorf("toolCases has a row for %s, which is no tool", name)
		}
	}
}

// planned reports the rows of tools with a plan (not planless).
func planned() int {
	n := 0
	for _, tc := range toolCases {
		if tc.plan != nil && !tc.planless {
			n++
		}
	}
	return n
}

func TestAnnotations(t *testing.T) {
	t.Parallel()
	tools := Tools(nil, nil)
	if len(tools) != len(toolCases) {
		t.Fatalf("Tools(nil, nil) lists %d tools, the table %d", len(tools), len(toolCases))
	}
	for _, ti := range tools {
		t.Run(ti.Name, func(t *testing.T) {
			t.Parallel()
			tc, ok := toolCases[ti.Name]
			if !ok {
				t.Fatalf("tool %s has no row in toolCases", ti.Name)
			}
			w := tc.hints
			a := ti.Annotations
			if a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("DestructiveHint or OpenWorldHint unset (nil means true)")
			}
			got := hints{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
			if got != w {
				t.Errorf("annotations = %+v, want %+v", got, w)
			}
			if ti.ReadOnly() != a.ReadOnlyHint {
				t.Errorf("class %q disagrees with readOnlyHint %v", ti.Class, a.ReadOnlyHint)
			}
			if (ti.ApprovalFormat == "") != ti.ReadOnly() {
				t.Errorf("approval format %q for class %q", ti.ApprovalFormat, ti.Class)
			}
			if len(ti.Privileges) == 0 || ti.Title == "" || ti.Description == "" {
				t.Errorf("missing privileges, title or description: %+v", ti)
			}
		})
	}
}

// TestAnnotationLiteralsComplete fails when a ToolAnnotations literal in
// this package leaves a field unset: the zero value of the two bool hints
// cannot be told apart from "unset" at run time.
func TestAnnotationLiteralsComplete(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "ToolAnnotations" {
				return true
			}
			found++
			set := map[string]bool{}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					set[kv.Key.(*ast.Ident).Name] = true
				}
			}
			for _, field := range []string{"ReadOnlyHint", "DestructiveHint", "IdempotentHint", "OpenWorldHint"} {
				if !set[field] {
					t.Errorf("%s: ToolAnnotations literal does not set %s", fset.Position(lit.Pos()), field)
				}
			}
			return true
		})
	}
	if found == 0 {
		t.Fatal("no ToolAnnotations literal found")
	}
}

// goldenTools returns the tools as a client lists them, in listing order,
// each normalized for a golden file: _meta dropped (go-sdk adds
// protocol-dependent fields), keys sorted, indented.
func goldenTools(t *testing.T, cs *mcp.ClientSession) (names []string, defs map[string][]byte) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defs = map[string][]byte{}
	for _, tool := range res.Tools {
		var m map[string]any
		if err := json.Unmarshal([]byte(mustJSON(t, tool)), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"_meta", "ttlMs", "cacheScope"} {
			delete(m, k)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		defs[tool.Name] = buf.Bytes()
	}
	return names, defs
}

// goldenProfiles are the configurations whose tool lists are golden: each
// profile's list is testdata/profiles/<name>.txt (tool names, one a line,
// in listing order), and every tool it lists must be served exactly as
// testdata/tools/<tool>.json holds it. A tool's definition depends on
// nothing a profile chooses, not even the operator's wait cap, which only
// the whole schema states (listedInput); maxWait profiles check that.
func goldenProfiles() []goldenProfile {
	responder := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
	adminClasses, _ := proxmoxsafe.ProfileAdmin.Classes()
	admin := proxmoxsafe.Policy{AllowedNodes: []string{"pve1", "pve2"}, Classes: adminClasses,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}} // no elicit/grant approvers here
	// No profile enables gateway-write: its own list, the gateway only.
	gateway := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassGateway, proxmoxsafe.ClassGatewayWrite},
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
	return []goldenProfile{
		{name: "default"},
		{name: "readonly", readOnly: true},
		{name: "responder", policy: &responder},
		{name: "admin", policy: &admin},
		{name: "gateway", policy: &gateway},
		// The admin tools again under an operator wait cap of 45 s: the
		// same list, each definition exactly the golden one (the listed
		// schema states no bounds; the server checks the cap, and the
		// instructions state it, TestWaitToolCap).
		{name: "admin", policy: &admin, maxWait: 45 * time.Second},
	}
}

type goldenProfile struct {
	name     string
	readOnly bool
	policy   *proxmoxsafe.Policy
	maxWait  time.Duration // 0: the default cap
}

// TestGoldenToolList: every profile lists exactly the tools of its golden
// name list, and serves each exactly as its one golden definition, on
// both protocol versions; every tool is listed by some profile, and no
// golden definition is left without a tool. Refresh with
//
//	go test ./mcpserver -run TestGoldenToolList -update
//
// which fails rather than write when two profiles serve one tool
// differently.
func TestGoldenToolList(t *testing.T) {
	t.Parallel()
	profiles := goldenProfiles()
	type listing struct {
		names []string
		defs  map[string][]byte
	}
	got := make([][]listing, len(profiles))
	// The group returns once its parallel subtests have all run.
	t.Run("list", func(t *testing.T) {
		for i, p := range profiles {
			got[i] = make([]listing, len(protocols))
			for j, pv := range protocols {
				t.Run(fmt.Sprintf("%s/wait=%v/%s", p.name, p.maxWait, protoName(pv)), func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, t.Context(), pv, fixtureConfig{opts: Options{ReadOnly: p.readOnly}, policy: p.policy, maxWait: p.maxWait})
					names, defs := goldenTools(t, f.cs)
					got[i][j] = listing{names, defs}
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	// One definition per tool, from every listing that has it.
	defs := map[string][]byte{}
	from := map[string]string{}
	for i, p := range profiles {
		for j, l := range got[i] {
			for _, name := range l.names {
				def := l.defs[name]
				if p.maxWait != 0 {
					continue // compared below, against the default cap's
				}
				where := p.name + "/" + protoName(protocols[j])
				if prev, ok := defs[name]; ok && !bytes.Equal(prev, def) {
					t.Errorf("%s: %s serves another definition than %s:\n%s\n%s", name, where, from[name], prev, def)
					continue
				}
				defs[name], from[name] = def, where
			}
		}
	}
	for _, ti := range Tools(nil, nil) {
		if defs[ti.Name] == nil {
			t.Errorf("%s: no golden profile lists it (add it to one in goldenProfiles)", ti.Name)
		}
	}
	if t.Failed() {
		return
	}
	if *update {
		lists := map[string][]string{}
		for i, p := range profiles {
			for _, l := range got[i] {
				if prev, ok := lists[p.name]; ok && !slices.Equal(prev, l.names) {
					t.Fatalf("profile %s lists other tools in another run: %v, %v", p.name, prev, l.names)
				}
				lists[p.name] = l.names
			}
		}
		writeGoldens(t, lists, defs)
		return
	}
	for i, p := range profiles {
		want := readGolden(t, filepath.Join("testdata", "profiles", p.name+".txt"))
		for j, l := range got[i] {
			if g := strings.Join(l.names, "\n") + "\n"; g != string(want) {
				t.Errorf("profile %s (wait cap %v, %s) lists other tools than testdata/profiles/%s.txt (run go test ./mcpserver -run TestGoldenToolList -update if intended):\n%s",
					p.name, p.maxWait, protoName(protocols[j]), p.name, g)
			}
		}
	}
	for name, def := range defs {
		want := readGolden(t, goldenToolPath(name))
		if !bytes.Equal(def, want) {
			t.Errorf("%s is served other than %s (run go test ./mcpserver -run TestGoldenToolList -update if intended):\n%s", name, goldenToolPath(name), def)
		}
	}
	for i, p := range profiles {
		if p.maxWait == 0 {
			continue
		}
		for _, l := range got[i] {
			for _, name := range l.names {
				if want := readGolden(t, goldenToolPath(name)); !bytes.Equal(l.defs[name], want) {
					t.Errorf("%s under wait cap %v differs from its golden definition:\n%s\nwant\n%s", name, p.maxWait, l.defs[name], want)
				}
			}
		}
	}
	files, err := filepath.Glob(goldenToolPath("*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if name := strings.TrimSuffix(filepath.Base(file), ".json"); defs[name] == nil {
			t.Errorf("%s: golden definition of no tool (run go test ./mcpserver -run TestGoldenToolList -update to remove it)", file)
		}
	}
}

func goldenToolPath(name string) string { return filepath.Join("testdata", "tools", name+".json") }

func readGolden(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./mcpserver -run TestGoldenToolList -update to create it)", err)
	}
	return b
}

// writeGoldens rewrites testdata/profiles and testdata/tools, removing
// the definitions of tools that are gone.
func writeGoldens(t *testing.T, lists map[string][]string, defs map[string][]byte) {
	t.Helper()
	for _, dir := range []string{"profiles", "tools"} {
		if err := os.MkdirAll(filepath.Join("testdata", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, names := range lists {
		list := strings.Join(names, "\n") + "\n"
		if err := os.WriteFile(filepath.Join("testdata", "profiles", name+".txt"), []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(goldenToolPath("*"))
	for _, file := range files {
		if defs[strings.TrimSuffix(filepath.Base(file), ".json")] == nil {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, def := range defs {
		if err := os.WriteFile(goldenToolPath(name), def, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolNamed returns the named tool from Tools(nil, nil): the list grows, so
// tests look tools up by name, never by position.
func toolNamed(t testing.TB, name string) ToolInfo {
	t.Helper()
	for _, ti := range Tools(nil, nil) {
		if ti.Name == name {
			return ti
		}
	}
	t.Fatalf("no tool %s", name)
	return ToolInfo{}
}

func TestToolsReturnsCopies(t *testing.T) {
	t.Parallel()
	a := toolNamed(t, ToolGuestPower)
	a.InputSchema.Properties["vmid"].Minimum = ptr(0.0)
	*a.Annotations.DestructiveHint = false
	a.Privileges[0] = "changed"
	b := toolNamed(t, ToolGuestPower)
	if b.InputSchema.Properties["vmid"].Minimum != nil || !*b.Annotations.DestructiveHint || b.Privileges[0] == "changed" {
		t.Error("Tools shares state between calls")
	}
}

// TestWithWaitDecodesBoth: a mutation tool's arguments decode the library
// input and the adapter's wait parameters from the one object.
func TestWithWaitDecodesBoth(t *testing.T) {
	t.Parallel()
	var w withWait[proxmoxsafe.GuestPowerInput]
	raw := `{"node":"pve1","type":"qemu","vmid":100,"action":"stop","approval":"APPROVE stop pve1/qemu/100","wait":true,"timeout_seconds":5}`
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		t.Fatal(err)
	}
	if w.input.Node != "pve1" || w.input.VMID != 100 || w.input.Action != "stop" || w.input.Approval != "APPROVE stop pve1/qemu/100" ||
		!w.WaitForOutcome || w.TimeoutSeconds != 5 || w.input.Wait != nil {
		t.Errorf("decoded %+v", w)
	}
	if err := json.Unmarshal([]byte(`{"vmid":"x"}`), &w); err == nil {
		t.Error("a wrong type decoded")
	}
}

// TestRequiresUserInteraction: over the wire, exactly the tools whose
// effect cannot be undone — the destroy class and the gateway's writes —
// carry Claude Code's requiresUserInteraction flag; every other tool has
// no _meta of that key.
func TestRequiresUserInteraction(t *testing.T) {
	t.Parallel()
	pol := everyClassPolicy()
	f := newFixture(t, t.Context(), "", fixtureConfig{policy: &pol})
	lt, err := f.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	class := map[string]proxmoxsafe.Class{}
	for _, info := range Tools(nil, nil) {
		class[info.Name] = info.Class
	}
	flagged := map[string]bool{}
	for _, tool := range lt.Tools {
		v, has := tool.Meta[RequiresUserInteractionKey]
		want := class[tool.Name] == proxmoxsafe.ClassDestroy || class[tool.Name] == proxmoxsafe.ClassGatewayWrite
		if has != want || (has && v != true) {
			t.Errorf("%s (class %q): _meta[%s] = %v (present %v), want present %v", tool.Name, class[tool.Name], RequiresUserInteractionKey, v, has, want)
		}
		flagged[tool.Name] = has
	}
	if !flagged[ToolGuestDestroy] || !flagged[ToolAPIRequest] {
		t.Errorf("guest_destroy and api_request must be flagged: %v", flagged)
	}
}
