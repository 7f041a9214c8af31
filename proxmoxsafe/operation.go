package proxmoxsafe

import "slices"

// OperationInfo is what one operation declares about itself, once, in its
// own file. Everything that lists operations (the privileges of
// [Requirements], the risk lines of [ActionRisk], the adapter's tool texts
// and approval formats) is derived from the declarations, in the order
// [Operations] returns them.
type OperationInfo struct {
	// Name is the operation, as [AuditRecord.Op] and [Requirement.Operation]
	// spell it.
	Name Operation `json:"name"`
	// Class is the mutation class that enables it; "" for a read (and the
	// privilege report's Permissions and Version).
	Class Class `json:"class,omitempty"`
	// Method is the method of the operation's one mutating request; GET
	// for a read. ContainerMethod, when set, is the method for a
	// container where it differs (SetGuestConfig: pve-container has only
	// PUT …/config). The gateway write's method is the caller's (POST,
	// PUT or DELETE): Method is "" there.
	Method          string `json:"method"`
	ContainerMethod string `json:"container_method,omitempty"`
	// Route is the literal path template of that request (relative to
	// /api2/json), e.g. "/nodes/{node}/{type}/{vmid}/status/{action}";
	// for a read, the request that answers it. "{path...}" stands for any
	// API path (the gateway).
	Route string `json:"route"`
	// NodeTargeted operations name a node, which must be on the
	// allowlist; without one they cannot be used.
	NodeTargeted bool `json:"node_targeted,omitempty"`
	// Actions are the action words a mutation sends (the approval
	// phrase's and the audit record's action), each with its risk line;
	// nil for reads.
	Actions []ActionInfo `json:"actions,omitempty"`
	// ApprovalFormat is the shape of the approval phrase, e.g.
	// "APPROVE <action> <node>/<type>/<vmid>": <x> is a value, [ x] an
	// optional part, … a repetition. "" for reads.
	ApprovalFormat string `json:"approval_format,omitempty"`
	// Privileges are what the operation needs from the token; nil for the
	// operations that need none (Permissions, Version) and for the
	// gateway, whose path decides.
	Privileges []Privilege `json:"privileges,omitempty"`
}

// ActionInfo is one action word of a mutation and what can go wrong with
// it, in one line, for the person who approves it.
type ActionInfo struct {
	Name string `json:"name"`
	Risk string `json:"risk"`
}

// Privilege is one Proxmox privilege an operation needs on one ACL path
// (see [Requirement], which adds the operation's name and class).
type Privilege struct {
	// Path is the ACL path template: "/", "/nodes/{node}", "/vms/{vmid}",
	// "/storage/{storage}" or "/sdn/zones".
	Path string `json:"path"`
	// Name is the privilege, e.g. "VM.PowerMgmt".
	Name string `json:"name"`
	// Optional privileges are not needed for the call to succeed, but
	// without them Proxmox silently leaves entries out (or an option
	// needs them).
	Optional bool `json:"optional,omitempty"`
	// Note explains a nuance in one sentence.
	Note string `json:"note,omitempty"`
}

// operation is an operation's declaration with what the package does
// with it: the completion verifier of a mutation that returns receipts.
type operation struct {
	info OperationInfo
	// verify proves a receipt's effect (verify.go); nil for the reads and
	// for the mutations that return no receipt (CleanupSnapshots waits
	// for each deletion itself; APIRequest proves nothing).
	verify *verifier
}

// Operations returns every operation's declaration, in the order of the
// one list (operations.go). The slices are copies.
func Operations() []OperationInfo {
	out := make([]OperationInfo, len(operations))
	for i, op := range operations {
		out[i] = op.info.clone()
	}
	return out
}

// OperationNames returns the names of every operation, in list order:
// the names [Requirements], [Client.PermissionsFor] and the audit records
// know.
func OperationNames() []Operation {
	out := make([]Operation, len(operations))
	for i, op := range operations {
		out[i] = op.info.Name
	}
	return out
}

func (in OperationInfo) clone() OperationInfo {
	in.Actions = slices.Clone(in.Actions)
	in.Privileges = slices.Clone(in.Privileges)
	return in
}

// Action returns the declared action named name.
func (in OperationInfo) Action(name string) (ActionInfo, bool) {
	i := slices.IndexFunc(in.Actions, func(a ActionInfo) bool { return a.Name == name })
	if i < 0 {
		return ActionInfo{}, false
	}
	return in.Actions[i], true
}

// ActionNames returns the names of the declared actions, in order.
func (in OperationInfo) ActionNames() []string {
	out := make([]string, len(in.Actions))
	for i, a := range in.Actions {
		out[i] = a.Name
	}
	return out
}

// fallbackRisk is what [ActionRisk] says of an action no operation declares.
const fallbackRisk = "review the effect above."

// ActionRisk says in one line what can go wrong with an action, for the
// plans shown to the person who approves it (the elicitation form, the
// approval page): the risk line the first operation declaring the action
// gives ([OperationInfo.Actions]). An action no operation declares gets a
// generic line.
func ActionRisk(action string) string {
	for _, op := range operations {
		if a, ok := op.info.Action(action); ok {
			return a.Risk
		}
	}
	return fallbackRisk
}

// Risk lines shared by the operations that send the same action word.
const (
	riskStart    = "the guest starts using CPU, memory and network; check it should run here."
	riskShutdown = "services on the guest are interrupted until it is running again."
	riskStop     = "the guest loses power without a clean shutdown; unsaved data can be lost."
	riskDelete   = "a deleted snapshot cannot be restored."
	riskCreate   = "the new guest takes storage, and CPU and memory once started; a full clone copies every disk and loads the storage while it runs."
	riskGateway  = "the request does whatever Proxmox does for its path, with no precondition of this server's; check the method, path and parameters above."
)
