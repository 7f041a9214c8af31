package mcpserver

import "github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

// Tool names of the admin surface (issue 11), each off unless its class
// is enabled (the binary's admin profile enables them).
const (
	ToolGuestSuspend     = "guest_suspend"
	ToolGuestResume      = "guest_resume"
	ToolSnapshotRollback = "snapshot_rollback"
	ToolSnapshotDelete   = "snapshot_delete"
)

// The admin tools' arguments: the library inputs plus waitArgs.
type (
	suspendGuestArgs struct {
		proxmoxsafe.SuspendGuestInput
		waitArgs
	}
	resumeGuestArgs struct {
		proxmoxsafe.ResumeGuestInput
		waitArgs
	}
	rollbackSnapshotArgs struct {
		proxmoxsafe.RollbackSnapshotInput
		waitArgs
	}
	deleteSnapshotArgs struct {
		proxmoxsafe.DeleteSnapshotInput
		waitArgs
	}
)

func (a suspendGuestArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.SuspendGuestInput {
	a.Wait = w
	return a.SuspendGuestInput
}

func (a resumeGuestArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.ResumeGuestInput {
	a.Wait = w
	return a.ResumeGuestInput
}

func (a rollbackSnapshotArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.RollbackSnapshotInput {
	a.Wait = w
	return a.RollbackSnapshotInput
}

func (a deleteSnapshotArgs) library(w *proxmoxsafe.WaitOptions) proxmoxsafe.DeleteSnapshotInput {
	a.Wait = w
	return a.DeleteSnapshotInput
}

// adminTools are the tools of the admin classes. Suspend and resume are
// two tools, not one with an action: their preconditions, effects and
// parameters (todisk) differ, and each approval phrase names its verb.
func adminTools() []toolDef {
	return []toolDef{
		mutationTool[suspendGuestArgs](ToolInfo{
			Name:  ToolGuestSuspend,
			Title: "Suspend a VM",
			Description: "Pause one running QEMU VM in memory, or with todisk: true hibernate it (its memory is written to disk and the VM stops, locked \"suspended\", until guest_resume or a start). Containers are not supported (Proxmox's container suspend is experimental). " +
				"Refused (nothing is done) unless the operator enabled the power-extra class, allows the node and does not protect the guest, and the VM is running, not already paused, not locked and not a template; an HA-managed VM cannot be hibernated. " +
				"Needs the approval phrase \"APPROVE suspend <node>/qemu/<vmid>\" (plus \" todisk=1\" for a hibernation) unless the operator set another approval level: call without approval first and show the user the refusal (exact phrase, current state, effect). " +
				"Returns a receipt with the task UPID (qmpause, or qmsuspend for todisk); with wait: true it waits (timeout_seconds) until the VM is paused (or stopped and locked suspended).",
			Class:          proxmoxsafe.ClassPowerExtra,
			Annotations:    powerAnnotations,
			ApprovalFormat: "APPROVE suspend <node>/qemu/<vmid>[ todisk=1]",
		}, ops(proxmoxsafe.OpSuspendGuest), (*proxmoxsafe.Client).SuspendGuest, func(in proxmoxsafe.SuspendGuestInput, r *proxmoxsafe.Receipt) string {
			if in.ToDisk {
				return ofGuest("suspend to disk", r)
			}
			return ofGuest("suspend", r)
		}),
		mutationTool[resumeGuestArgs](ToolInfo{
			Name:  ToolGuestResume,
			Title: "Resume a VM",
			Description: "Resume one paused QEMU VM, or start a hibernated one (stopped, locked \"suspended\") from its saved memory. " +
				"Refused (nothing is done) unless the operator enabled the power-extra class, allows the node and does not protect the guest, and the VM is paused or hibernated (a running or simply stopped VM is refused: use guest_power start), not otherwise locked and not a template. " +
				"Needs the approval phrase \"APPROVE resume <node>/qemu/<vmid>\" unless the operator set another approval level. " +
				"Returns a receipt with the task UPID (qmresume); with wait: true it waits (timeout_seconds) until the VM runs unpaused.",
			Class:          proxmoxsafe.ClassPowerExtra,
			Annotations:    startAnnotations,
			ApprovalFormat: "APPROVE resume <node>/qemu/<vmid>",
		}, ops(proxmoxsafe.OpResumeGuest), (*proxmoxsafe.Client).ResumeGuest, func(_ proxmoxsafe.ResumeGuestInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("resume", r)
		}),
		mutationTool[rollbackSnapshotArgs](ToolInfo{
			Name:  ToolSnapshotRollback,
			Title: "Roll back to a snapshot",
			Description: "Roll one guest back to one of its snapshots. Everything that changed since the snapshot (disks, configuration, and the memory of a running guest) is lost; Proxmox stops a running guest first. A VM snapshot that includes RAM runs the VM again afterwards; otherwise the guest stays stopped unless start: true. " +
				"Refused (nothing is done) unless the operator enabled the snapshot-admin class, allows the node and does not protect the guest, and the snapshot exists (not current), the guest is not locked and not a template. " +
				"Needs the approval phrase \"APPROVE rollback <node>/<type>/<vmid>/<snapname>\" (plus \" start=1\" with start) unless the operator set another approval level: call without approval first and show the user the refusal, which says what will be lost and whether the snapshot has RAM. " +
				"Returns a receipt with the task UPID (qmrollback or vzrollback); with wait: true it waits (timeout_seconds) until the guest's current state is based on the snapshot.",
			Class:          proxmoxsafe.ClassSnapshotAdmin,
			Annotations:    powerAnnotations,
			ApprovalFormat: "APPROVE rollback <node>/<type>/<vmid>/<snapname>[ start=1]",
		}, ops(proxmoxsafe.OpRollbackSnapshot), (*proxmoxsafe.Client).RollbackSnapshot, func(_ proxmoxsafe.RollbackSnapshotInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("rollback", r) + " to snapshot " + clean(r.Target.Snapshot, 64)
		}),
		mutationTool[deleteSnapshotArgs](ToolInfo{
			Name:  ToolSnapshotDelete,
			Title: "Delete a snapshot",
			Description: "Delete one named snapshot of a guest (it cannot be restored afterwards); force: true removes it from the configuration even if removing its disk snapshots fails. Keep markers are not consulted: this deletes what it is told to (snapshot_cleanup applies the retention policy). " +
				"Refused (nothing is done) unless the operator enabled the snapshot-admin class, allows the node and does not protect the guest, and the snapshot exists (not current), the guest is not locked and not a template. " +
				"Needs the approval phrase \"APPROVE delsnapshot <node>/<type>/<vmid>/<snapname>\" (plus \" force=1\" with force) unless the operator set another approval level. " +
				"Returns a receipt with the task UPID (qmdelsnapshot or vzdelsnapshot); with wait: true it waits (timeout_seconds) until the snapshot is gone from the list.",
			Class:          proxmoxsafe.ClassSnapshotAdmin,
			Annotations:    cleanupAnnotations,
			ApprovalFormat: "APPROVE delsnapshot <node>/<type>/<vmid>/<snapname>[ force=1]",
		}, ops(proxmoxsafe.OpDeleteSnapshot), (*proxmoxsafe.Client).DeleteSnapshot, func(_ proxmoxsafe.DeleteSnapshotInput, r *proxmoxsafe.Receipt) string {
			return ofGuest("deletion of snapshot "+clean(r.Target.Snapshot, 64), r)
		}),
	}
}
