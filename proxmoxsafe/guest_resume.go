package proxmoxsafe

import (
	"context"
	"net/url"
)

// OpResumeGuest is the name of [Client.ResumeGuest].
const OpResumeGuest Operation = "ResumeGuest"

// resumeGuestOp declares [Client.ResumeGuest].
var resumeGuestOp = operation{verify: resumeVerifier, info: OperationInfo{
	Name:         OpResumeGuest,
	Class:        ClassPowerExtra,
	Method:       "POST",
	Route:        "/nodes/{node}/qemu/{vmid}/status/resume",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "resume", Risk: riskStart},
	},
	ApprovalFormat: "APPROVE resume <node>/qemu/<vmid>",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the VM's state and running tasks first"},
		{Path: pathVMs, Name: "VM.PowerMgmt"},
	},
}}

// ResumeGuestInput names the VM [Client.ResumeGuest] resumes.
type ResumeGuestInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	// Type must be "qemu", as for [SuspendGuestInput].
	Type GuestType `json:"type" validate:"required,oneof=qemu"`
	VMID int       `json:"vmid" validate:"required,pve_vmid"`
	Controls
}

// Target returns the VM the input names.
func (in ResumeGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// ResumeGuest resumes a paused or hibernated QEMU VM (class
// "power-extra"; POST …/status/resume, a qmresume task). It refuses a VM
// that is neither paused nor hibernated (locked "suspended"), a template
// and a VM locked for anything else.
func (c *Client) ResumeGuest(ctx context.Context, in ResumeGuestInput) (*Receipt, error) {
	t := in.Target()
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &resumeGuestOp, mutationCall: mutationCall{
		planOnly: in.Plan,
		action:   "resume",
		input:    in,
		target:   t,
		given:    in.Approval,
		precondition: func(_ context.Context, s GuestState) error {
			return resumePrecondition(t, s)
		},
		effect: func(s GuestState) string {
			if hibernated(s) {
				return "resume " + describe(t, s) + " from hibernation: start it from the memory state saved on disk"
			}
			return "resume " + describe(t, s) + ": its CPUs run again"
		},
		path: guestPath(t, "status", "resume"),
		form: url.Values{},
	}})
}

func resumePrecondition(t Target, s GuestState) error {
	who := describe(t, s)
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; templates do not run", who)
	case hibernated(s):
		return haPrecondition("resume", t, s)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case s.Status == "running" && s.Paused():
		return haPrecondition("resume", t, s)
	case s.Status == "running":
		return refuse(ErrPrecondition, "%s is running and not paused; there is nothing to resume", who)
	}
	return refuse(ErrPrecondition, "%s is %s and not suspended; resume only continues a paused or hibernated VM (start it instead)", who, s.Status)
}

// resumeVerifier proves a resume: the VM runs and is not paused.
var resumeVerifier = &verifier{proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
	return stateProof(r, stateWant{status: "running"}), nil
}}
