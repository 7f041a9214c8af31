package proxmoxsafe

// Operation names one operation of this package: a [Client] method that
// talks to Proxmox. It appears in [Requirements], [AuditRecord.Op] and
// [Client.PermissionsFor].
type Operation string

// The operations without a declaration of their own: the helpers built
// on [Client.TaskState] and the completion proof. Every other operation
// names its constant in its own file, beside its declaration.
const (
	OpWaitTask Operation = "WaitTask"
	OpVerify   Operation = "Verify"
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

// Requirements returns the privileges every operation of this package
// needs, whatever the policy, in a stable order: each operation's declared
// [OperationInfo.Privileges], in the order of [Operations].
// [Client.Permissions] checks the ones the current policy uses against
// the token.
func Requirements() []Requirement {
	var out []Requirement
	for _, op := range operations {
		for _, p := range op.info.Privileges {
			out = append(out, Requirement{Operation: op.info.Name, Class: op.info.Class, Path: p.Path, Privilege: p.Name,
				Optional: p.Optional, NodeTargeted: op.info.NodeTargeted, Note: p.Note})
		}
	}
	return out
}

// permissionFree reports an operation that needs no privilege at all
// (Permissions, Version): a read that declares none. The gateway's
// operations declare none either, but their path decides.
func (op *operation) permissionFree() bool {
	return op.info.Class == "" && len(op.info.Privileges) == 0
}
