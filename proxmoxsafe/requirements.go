package proxmoxsafe

import "slices"

// Operation names one operation of this package: a [Client] method that
// talks to Proxmox. It appears in [Requirements], [AuditRecord.Op] and
// [Client.PermissionsFor].
type Operation string

// The operations of this package.
const (
	OpClusterStatus Operation = "ClusterStatus"
	OpNodeStatus    Operation = "NodeStatus"
	OpListGuests    Operation = "ListGuests"
	OpGuestStatus   Operation = "GuestStatus"
	OpGuestConfig   Operation = "GuestConfig"
	OpListSnapshots Operation = "ListSnapshots"
	OpTaskStatus    Operation = "TaskStatus"
	OpTaskLog       Operation = "TaskLog"
	OpTaskReport    Operation = "TaskReport"
	OpWaitTask      Operation = "WaitTask"
	OpListTasks     Operation = "ListTasks"
	OpListStorage   Operation = "ListStorage"
	OpListBackups   Operation = "ListBackups"
	OpCephStatus    Operation = "CephStatus"
	OpHAStatus      Operation = "HAStatus"
	OpPermissions   Operation = "Permissions"
	OpVersion       Operation = "Version"
	OpGuestPower    Operation = "GuestPower"
	OpSnapshotGuest Operation = "SnapshotGuest"
	OpVerify        Operation = "Verify"
	// The responder's operations and snapshot deletion.
	OpStartGuest       Operation = "StartGuest"
	OpRebootGuest      Operation = "RebootGuest"
	OpResetGuest       Operation = "ResetGuest"
	OpCleanupSnapshots Operation = "CleanupSnapshots"
	OpDeleteSnapshot   Operation = "DeleteSnapshot"
	// The power-extra class.
	OpSuspendGuest Operation = "SuspendGuest"
	OpResumeGuest  Operation = "ResumeGuest"
	// Rollback, with DeleteSnapshot the snapshot-admin class.
	OpRollbackSnapshot Operation = "RollbackSnapshot"
	// The generic API gateway: GET (class gateway) and POST, PUT or DELETE
	// (class gateway-write).
	OpAPIGet     Operation = "APIGet"
	OpAPIRequest Operation = "APIRequest"
	// The provision class.
	OpCloneGuest      Operation = "CloneGuest"
	OpCreateVM        Operation = "CreateVM"
	OpCreateContainer Operation = "CreateContainer"
	// The destroy class.
	OpDestroyGuest Operation = "DestroyGuest"
	// The migrate class.
	OpMigrateGuest Operation = "MigrateGuest"
	// The config class.
	OpResizeDisk     Operation = "ResizeDisk"
	OpSetGuestConfig Operation = "SetGuestConfig"
)

// Requirement is one Proxmox privilege an operation of this package needs
// on one ACL path.
type Requirement struct {
	// Operation is the Client method, e.g. [OpGuestPower].
	Operation Operation `json:"operation"`
	// Class is the operation's mutation class; "" for reads.
	Class Class `json:"class,omitempty"`
	// Path is the ACL path template: "/", "/nodes/{node}", "/vms/{vmid}"
	// or "/storage/{storage}".
	Path string `json:"path"`
	// Privilege is the Proxmox privilege, e.g. "VM.PowerMgmt".
	Privilege string `json:"privilege"`
	// Optional requirements are not needed for the call to succeed, but
	// without them Proxmox silently leaves entries out.
	Optional bool `json:"optional,omitempty"`
	// NodeTargeted operations need a node on the allowlist to be usable.
	NodeTargeted bool `json:"node_targeted,omitempty"`
	// Note explains a nuance in one sentence.
	Note string `json:"note,omitempty"`
}

// Privilege path templates.
const (
	pathRoot    = "/"
	pathNode    = "/nodes/{node}"
	pathVMs     = "/vms/{vmid}"
	pathStorage = "/storage/{storage}"
	// pathSDNZones is where SDN.Use on bridges is granted: a plain Linux
	// bridge is /sdn/zones/localnetwork/<bridge>.
	pathSDNZones = "/sdn/zones"
)

// requirements is the table behind [Requirements]: what each operation's
// requests need according to the PVE 9.1 schema ("permissions" of each
// endpoint) and pve-storage's check_volume_access for backup volumes.
var requirements = []Requirement{
	{Operation: OpClusterStatus, Path: pathRoot, Privilege: "Sys.Audit"},
	{Operation: OpNodeStatus, Path: pathNode, Privilege: "Sys.Audit", NodeTargeted: true},
	{Operation: OpListGuests, Path: pathVMs, Privilege: "VM.Audit",
		Note: "guests the token lacks it on are silently left out"},
	{Operation: OpGuestStatus, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true},
	{Operation: OpGuestConfig, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true},
	{Operation: OpListSnapshots, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true},
	{Operation: OpTaskStatus, Path: pathNode, Privilege: "Sys.Audit", NodeTargeted: true,
		Note: "tasks the token started itself are readable without it"},
	{Operation: OpTaskLog, Path: pathNode, Privilege: "Sys.Audit", NodeTargeted: true,
		Note: "tasks the token started itself are readable without it"},
	{Operation: OpListTasks, Path: pathNode, Privilege: "Sys.Audit", NodeTargeted: true,
		Note: "without it only the token's own tasks are listed"},
	{Operation: OpListStorage, Path: pathStorage, Privilege: "Datastore.Audit",
		Note: "storages the token lacks it on are silently left out"},
	{Operation: OpListBackups, Path: pathStorage, Privilege: "Datastore.Audit", NodeTargeted: true},
	{Operation: OpListBackups, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true, Optional: true,
		Note: "Proxmox shows a backup only with Datastore.AllocateSpace on the storage and VM.Backup on the guest (or Datastore.Allocate); with Datastore.Audit alone the list is empty"},
	{Operation: OpListBackups, Path: pathVMs, Privilege: "VM.Backup", NodeTargeted: true, Optional: true,
		Note: "see Datastore.AllocateSpace: both are needed to see a guest's backups"},
	{Operation: OpCephStatus, Path: pathRoot, Privilege: "Sys.Audit", Note: "Datastore.Audit on / also suffices"},
	{Operation: OpHAStatus, Path: pathRoot, Privilege: "Sys.Audit"},
	{Operation: OpGuestPower, Class: ClassPower, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state and its running tasks first; without Sys.Audit on the node only the token's own tasks are seen"},
	{Operation: OpGuestPower, Class: ClassPower, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	{Operation: OpSnapshotGuest, Class: ClassSnapshot, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, snapshots and running tasks first; without Sys.Audit on the node only the token's own tasks are seen"},
	{Operation: OpSnapshotGuest, Class: ClassSnapshot, Path: pathVMs, Privilege: "VM.Snapshot", NodeTargeted: true},
	{Operation: OpStartGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state and its running tasks first"},
	{Operation: OpStartGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	{Operation: OpRebootGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, uptime and running tasks first"},
	{Operation: OpRebootGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	{Operation: OpResetGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, uptime and running tasks first"},
	{Operation: OpResetGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	{Operation: OpResetGuest, Class: ClassResponder, Path: pathVMs, Privilege: "VM.GuestAgent.Audit", NodeTargeted: true,
		Note: "for the agent ping that must fail before a reset; PVE 7 and 8 want VM.Monitor instead"},
	{Operation: OpCleanupSnapshots, Class: ClassResponder, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the plan reads the guest's state, snapshots and running tasks"},
	{Operation: OpCleanupSnapshots, Class: ClassResponder, Path: pathVMs, Privilege: "VM.Snapshot", NodeTargeted: true},
	{Operation: OpDeleteSnapshot, Class: ClassSnapshotAdmin, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, snapshots and running tasks first"},
	{Operation: OpDeleteSnapshot, Class: ClassSnapshotAdmin, Path: pathVMs, Privilege: "VM.Snapshot", NodeTargeted: true},
	{Operation: OpRollbackSnapshot, Class: ClassSnapshotAdmin, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, snapshots and running tasks first"},
	{Operation: OpRollbackSnapshot, Class: ClassSnapshotAdmin, Path: pathVMs, Privilege: "VM.Snapshot", NodeTargeted: true,
		Note: "VM.Snapshot.Rollback alone also suffices (Proxmox accepts either)"},
	{Operation: OpRollbackSnapshot, Class: ClassSnapshotAdmin, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true, Optional: true,
		Note: "only for start=1"},
	{Operation: OpSuspendGuest, Class: ClassPowerExtra, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the VM's state and running tasks first"},
	{Operation: OpSuspendGuest, Class: ClassPowerExtra, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	{Operation: OpSuspendGuest, Class: ClassPowerExtra, Path: pathVMs, Privilege: "VM.Config.Disk", NodeTargeted: true, Optional: true,
		Note: "only for todisk (hibernation), with Datastore.AllocateSpace on the storage for the memory state"},
	{Operation: OpSuspendGuest, Class: ClassPowerExtra, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true, Optional: true,
		Note: "only for todisk: the storage that receives the memory state"},
	{Operation: OpResumeGuest, Class: ClassPowerExtra, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the VM's state and running tasks first"},
	{Operation: OpResumeGuest, Class: ClassPowerExtra, Path: pathVMs, Privilege: "VM.PowerMgmt", NodeTargeted: true},
	// Provision: the schema's clone_vm / create_vm permissions, plus the
	// reads of the preconditions (the source's state and config, the
	// node's storages; the new VMID and the template or ISO).
	{Operation: OpCloneGuest, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the source's state, configuration and running tasks first"},
	{Operation: OpCloneGuest, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Clone", NodeTargeted: true,
		Note: "on the source guest"},
	{Operation: OpCloneGuest, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Allocate", NodeTargeted: true,
		Note: "on /vms/{newid}, or on the pool the clone joins"},
	{Operation: OpCloneGuest, Class: ClassProvision, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true,
		Note: "on every storage the clone's disks go to; it also lets the preconditions see the storage"},
	{Operation: OpCloneGuest, Class: ClassProvision, Path: pathSDNZones, Privilege: "SDN.Use", NodeTargeted: true,
		Note: "on the bridges the source's network devices use (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Allocate", NodeTargeted: true,
		Note: "on /vms/{vmid}, or on the pool the VM joins"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Config.CPU", NodeTargeted: true,
		Note: "cores and sockets (Proxmox checks the config privilege of every option of a create but the disks, which need Datastore.AllocateSpace)"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Config.Memory", NodeTargeted: true},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Config.Network", NodeTargeted: true},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Config.HWType", NodeTargeted: true,
		Note: "the SCSI controller (scsihw)"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Config.Options", NodeTargeted: true,
		Note: "name, ostype, description"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true,
		Note: "on the disk's storage, and on the ISO image's (Datastore.Audit suffices there); it also lets the preconditions see them"},
	{Operation: OpCreateVM, Class: ClassProvision, Path: pathSDNZones, Privilege: "SDN.Use", NodeTargeted: true,
		Note: "on the bridge (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
	{Operation: OpCreateContainer, Class: ClassProvision, Path: pathVMs, Privilege: "VM.Allocate", NodeTargeted: true,
		Note: "on /vms/{vmid}, or on the pool the container joins"},
	{Operation: OpCreateContainer, Class: ClassProvision, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true,
		Note: "on the root disk's storage and the template's; it also lets the preconditions see them"},
	{Operation: OpCreateContainer, Class: ClassProvision, Path: pathSDNZones, Privilege: "SDN.Use", NodeTargeted: true,
		Note: "on the bridge (/sdn/zones/localnetwork/<bridge> for a plain bridge)"},
	{Operation: OpCreateContainer, Class: ClassProvision, Path: pathRoot, Privilege: "Sys.Modify", NodeTargeted: true, Optional: true,
		Note: "only for a privileged container"},
	{Operation: OpDestroyGuest, Class: ClassDestroy, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, configuration, snapshots and running tasks first (for a template, also the configurations of the guests that could be its linked clones)"},
	{Operation: OpDestroyGuest, Class: ClassDestroy, Path: pathVMs, Privilege: "VM.Allocate", NodeTargeted: true,
		Note: "purge needs nothing more: Proxmox removes the guest from backup jobs, replication jobs and HA under VM.Allocate alone"},
	{Operation: OpMigrateGuest, Class: ClassMigrate, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state and running tasks first (the target node's status in /cluster/resources needs no privilege)"},
	{Operation: OpMigrateGuest, Class: ClassMigrate, Path: pathVMs, Privilege: "VM.Migrate", NodeTargeted: true,
		Note: "for the migration and for Proxmox's own precheck (GET …/migrate), which needs it too"},
	{Operation: OpResizeDisk, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, config and running tasks first"},
	{Operation: OpResizeDisk, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Config.Disk", NodeTargeted: true},
	{Operation: OpResizeDisk, Class: ClassConfig, Path: pathStorage, Privilege: "Datastore.AllocateSpace", NodeTargeted: true,
		Note: "on the storage that holds the disk; Proxmox checks it when it resizes"},
	{Operation: OpSetGuestConfig, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Audit", NodeTargeted: true,
		Note: "the preconditions read the guest's state, config, pending changes and running tasks first"},
	{Operation: OpSetGuestConfig, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Config.CPU", NodeTargeted: true,
		Note: "for cores, sockets, cpulimit and cpuunits"},
	{Operation: OpSetGuestConfig, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Config.Memory", NodeTargeted: true,
		Note: "for memory, balloon and swap"},
	{Operation: OpSetGuestConfig, Class: ClassConfig, Path: pathVMs, Privilege: "VM.Config.Options", NodeTargeted: true,
		Note: "for name, hostname, description, tags and onboot"},
}

// permissionFreeOps need no privilege at all.
var permissionFreeOps = []Operation{OpPermissions, OpVersion}

// pathDependentOps need whatever privilege the requested path needs:
// Proxmox checks it, and nothing can be listed in advance.
var pathDependentOps = []Operation{OpAPIGet, OpAPIRequest}

// Requirements returns the privileges every operation of this package
// needs, whatever the policy, in a stable order. [Client.Permissions]
// checks the ones the current policy uses against the token.
func Requirements() []Requirement { return slices.Clone(requirements) }

// Operations returns the names of every operation [Requirements] and
// [Client.PermissionsFor] know, in table order.
func Operations() []Operation {
	var out []Operation
	for _, r := range requirements {
		if !slices.Contains(out, r.Operation) {
			out = append(out, r.Operation)
		}
	}
	out = append(out, permissionFreeOps...)
	return append(out, pathDependentOps...)
}
