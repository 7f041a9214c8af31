package proxmoxsafe

import (
	"context"
	"net/url"
	"strconv"
)

// OpMigrateGuest is the name of [Client.MigrateGuest].
const OpMigrateGuest Operation = "MigrateGuest"

// migrateGuestOp declares [Client.MigrateGuest].
var migrateGuestOp = operation{verify: migrateVerifier, info: OperationInfo{
	Name:         OpMigrateGuest,
	Class:        ClassMigrate,
	Method:       "POST",
	Route:        "/nodes/{node}/{type}/{vmid}/migrate",
	NodeTargeted: true,
	Actions: []ActionInfo{
		{Name: "migrate", Risk: "a live migration pauses the VM briefly at the switch-over; copying disks loads storage and network; a restart migration stops the container's services meanwhile."},
	},
	ApprovalFormat: "APPROVE migrate <node>/<type>/<vmid> target=<target>[ online=1][ with-local-disks=1][ restart=1][ timeout=<n>]",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "the preconditions read the guest's state and running tasks first (the target node's status in /cluster/resources needs no privilege)"},
		{Path: pathVMs, Name: "VM.Migrate",
			Note: "for the migration and for Proxmox's own precheck (GET …/migrate), which needs it too"},
	},
}}

// The "migrate" class: move a guest to another node of the cluster.

// MaxMigrateTimeout caps [MigrateGuestInput.Timeout] (seconds).
const MaxMigrateTimeout = 3600

// MigrateGuestInput names the guest [Client.MigrateGuest] moves and
// where. Which mode applies depends on the type and the fresh power
// state: a running VM needs Online, a running container needs Restart;
// both are refused for a stopped guest, so that the approval names what
// will really happen.
type MigrateGuestInput struct {
	GuestRef
	// TargetNode is the node to move the guest to: another cluster member,
	// online and on the allowlist.
	TargetNode string `json:"target" validate:"required,pve_node"`
	// Online live-migrates a running VM (QEMU only). Proxmox refuses to
	// move a running VM without it; a container has no live migration.
	Online bool `json:"online,omitempty"`
	// WithLocalDisks copies the VM's disks on node-local storage to the
	// target (QEMU only; Proxmox's "with-local-disks"). Needed whenever
	// the precheck lists local disks: copying disks is never implicit.
	WithLocalDisks bool `json:"with_local_disks,omitempty"`
	// Restart moves a running container by shutting it down, moving it
	// and starting it on the target (LXC only).
	Restart bool `json:"restart,omitempty"`
	// Timeout is how long restart mode waits for the container to shut
	// down, in seconds; zero means Proxmox's default (180). It is only
	// accepted with Restart.
	Timeout int `json:"timeout,omitempty" validate:"min=0,max=3600" jsonschema:"Restart's shutdown timeout, s (default 180)."`
	Controls
}

// Target returns the guest the input names (on its present node).
func (in MigrateGuestInput) Target() Target {
	return Target{Node: in.Node, Type: in.Type, VMID: in.VMID}
}

// approvalParams bind every option that changes what happens: the target
// node, live or restart mode, copying local disks, the shutdown timeout.
// The names are Proxmox's.
func (in MigrateGuestInput) approvalParams() []ApprovalParam {
	ps := []ApprovalParam{{Name: "target", Value: in.TargetNode}}
	if in.Online {
		ps = append(ps, ApprovalParam{Name: "online", Value: "1"})
	}
	if in.WithLocalDisks {
		ps = append(ps, ApprovalParam{Name: "with-local-disks", Value: "1"})
	}
	if in.Restart {
		ps = append(ps, ApprovalParam{Name: "restart", Value: "1"})
	}
	if in.Timeout > 0 {
		ps = append(ps, ApprovalParam{Name: "timeout", Value: strconv.Itoa(in.Timeout)})
	}
	return ps
}

// ApprovalPhrase returns the phrase that approves this input, e.g.
// "APPROVE migrate pve1/qemu/101 target=pve2 online=1".
func (in MigrateGuestInput) ApprovalPhrase() string {
	return ApprovalPhrase("migrate", in.Target(), in.approvalParams()...)
}

// form is the one POST's parameters: exactly the approved options.
func (in MigrateGuestInput) form() url.Values { return paramForm(in.approvalParams()) }

// MigrateGuest moves a guest to another node (class "migrate"; POST
// …/migrate, a qmigrate or vzmigrate task, hamigrate for an HA-managed
// guest). Both the source and the target node must be on the allowlist.
// Before approval it reads the fresh state and refuses a locked guest, a
// template, a mode that does not fit the power state (a running VM
// without Online, a running container without Restart, either option on
// a stopped guest), a target node that is not online, and whatever
// Proxmox's own precheck (GET …/migrate?target=…) reports as a blocker:
// the target not allowed, local disks without WithLocalDisks, host
// devices. The plan ([Receipt.Plan]) carries the precheck's answer. With
// in.Wait it verifies that /cluster/resources shows the guest on the
// target node.
func (c *Client) MigrateGuest(ctx context.Context, in MigrateGuestInput) (*Receipt, error) {
	t := in.Target()
	var pre *MigratePrecheck
	nodes := newPrefetch(func(ctx context.Context) (cappedRows[rawNodeResource], error) { return c.nodeResources(ctx) })
	precheck := newPrefetch(func(ctx context.Context) (*MigratePrecheck, error) { return c.migratePrecheck(ctx, t, in) })
	return c.waitIfAsked(ctx, in.Wait, &mutation{decl: &migrateGuestOp, mutationCall: mutationCall{
		planOnly:  in.Plan,
		action:    "migrate",
		input:     in,
		target:    t,
		alsoNodes: []string{in.TargetNode},
		params:    in.approvalParams(),
		given:     in.Approval,
		prefetch:  []prefetcher{nodes, precheck},
		precondition: func(ctx context.Context, s GuestState) error {
			if err := migratePrecondition(t, s, in); err != nil {
				return err
			}
			if err := checkTargetNode(ctx, t, s, in.TargetNode, nodes); err != nil {
				return err
			}
			p, err := precheck.get(ctx)
			if err != nil {
				return err
			}
			pre = p
			if len(p.Blockers) > 0 {
				return refuse(ErrPrecondition, "%s cannot move to %s: %s", describe(t, s), in.TargetNode, p.summary())
			}
			return nil
		},
		effect: func(s GuestState) string {
			return migrateEffect(t, s, in, pre)
		},
		decorate: func(r *Receipt) {
			r.TargetNode = in.TargetNode
			if r.Plan != nil {
				r.Plan.Precheck = pre
			}
			if r.HAManaged && r.UPID != "" {
				r.Note = "the guest is HA-managed: Proxmox turned this into an HA migration (hamigrate task), which only asks the HA manager; the guest moves afterwards, so check where it runs, not just the task"
			}
		},
		path: guestPath(t, "migrate"),
		form: in.form(),
	}})
}

// migratePrecondition checks the fresh state against the requested mode.
func migratePrecondition(t Target, s GuestState, in MigrateGuestInput) error {
	who := describe(t, s)
	running := s.Status == "running"
	switch {
	case s.Template:
		return refuse(ErrPrecondition, "%s is a template; this server does not move templates (linked clones depend on their disks)", who)
	case s.Lock != "":
		return refuse(ErrPrecondition, "%s is locked (%s); wait for the operation holding the lock to finish", who, s.Lock)
	case t.Type == TypeQEMU && running && !in.Online:
		return refuse(ErrPrecondition, "%s is running; Proxmox cannot migrate a running VM offline: ask again with online (a live migration), or stop the VM first", who)
	case t.Type == TypeQEMU && !running && in.Online:
		return refuse(ErrPrecondition, "%s is %s; online applies to a running VM only (Proxmox would silently migrate it offline): ask again without online", who, s.Status)
	case t.Type == TypeLXC && running && !in.Restart:
		return refuse(ErrPrecondition, "%s is running; a running container moves only in restart mode (shut down, moved, started again): ask again with restart", who)
	case t.Type == TypeLXC && !running && in.Restart:
		return refuse(ErrPrecondition, "%s is %s; restart mode applies to a running container only: ask again without restart and timeout", who, s.Status)
	}
	return nil
}

// migrateEffect says what approving does, from the fresh state.
func migrateEffect(t Target, s GuestState, in MigrateGuestInput, pre *MigratePrecheck) string {
	e := "move " + describe(t, s) + " to node " + in.TargetNode
	switch {
	case in.Online:
		e += " while it keeps running (live migration)"
	case in.Restart:
		timeout := "180"
		if in.Timeout > 0 {
			timeout = strconv.Itoa(in.Timeout)
		}
		e += ": the container is shut down (up to " + timeout + " s, then stopped), moved, and started again on " + in.TargetNode + " — its services are down meanwhile"
	default:
		e += " while it is stopped (offline migration)"
	}
	if in.WithLocalDisks {
		e += "; its disks on node-local storage are copied to " + in.TargetNode
	}
	if s.HAManaged {
		e += "; the guest is HA-managed, so Proxmox hands the move to the HA manager (an hamigrate task)"
	}
	if pre != nil {
		e += "; " + pre.summary()
	}
	return e
}
