package proxmoxsafe_test

import (
	"slices"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestRequirementsTable(t *testing.T) {
	t.Parallel()
	ops := proxmoxsafe.OperationNames()
	for _, op := range []proxmoxsafe.Operation{"ClusterStatus", "NodeStatus", "ListGuests", "GuestStatus", "GuestConfig", "ListSnapshots",
		"TaskStatus", "TaskLog", "ListTasks", "ListStorage", "ListBackups", "CephStatus", "HAStatus", "GuestPower", "SnapshotGuest", "Permissions"} {
		if !slices.Contains(ops, op) {
			t.Errorf("%s missing from OperationNames()", op)
		}
	}
	for _, r := range proxmoxsafe.Requirements() {
		if r.Operation == "GuestPower" && r.Privilege == "VM.PowerMgmt" && (r.Path != "/vms/{vmid}" || r.Class != proxmoxsafe.ClassPower) {
			t.Errorf("GuestPower requirement = %+v", r)
		}
	}
}
