package proxmoxsafe

import (
	"context"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpGuestStatus is the name of [Client.GuestStatus].
const OpGuestStatus Operation = "GuestStatus"

// guestStatusOp declares [Client.GuestStatus].
var guestStatusOp = operation{info: OperationInfo{
	Name:         OpGuestStatus,
	Method:       "GET",
	Route:        "/nodes/{node}/{type}/{vmid}/status/current",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit"},
	},
}}

// GuestStatusInput names the guest [Client.GuestStatus] reports on.
type GuestStatusInput struct {
	GuestRef
}

// GuestStatusResult is one guest's live state from status/current. Sizes
// are bytes, times seconds; strings are sanitized.
type GuestStatusResult struct {
	Node string    `json:"node"`
	Type GuestType `json:"type"`
	VMID int       `json:"vmid"`
	Name string    `json:"name,omitempty"`
	// Status is "running" or "stopped"; a paused VM is "running".
	Status string `json:"status"`
	// QMPStatus is QEMU's own view ("running", "paused", "prelaunch", …);
	// empty for containers.
	QMPStatus string `json:"qmpstatus,omitempty"`
	// Paused is true for a running VM whose CPUs are paused.
	Paused bool    `json:"paused"`
	Uptime int64   `json:"uptime"`
	CPU    float64 `json:"cpu"`
	CPUs   int     `json:"cpus"`
	Mem    uint64  `json:"mem"`
	MaxMem uint64  `json:"maxmem"`
	// Disk is the root file system usage of a container; Proxmox reports
	// 0 for VMs, which it cannot see into.
	Disk      uint64 `json:"disk"`
	MaxDisk   uint64 `json:"maxdisk"`
	NetIn     uint64 `json:"netin"`
	NetOut    uint64 `json:"netout"`
	DiskRead  uint64 `json:"diskread"`
	DiskWrite uint64 `json:"diskwrite"`
	// Lock is the config lock ("backup", "snapshot", …), empty when unlocked.
	Lock     string `json:"lock,omitempty"`
	Template bool   `json:"template"`
	// HAManaged is true when the HA manager owns the guest's power state;
	// HAState is then the HA manager's state of it ("started",
	// "request_stop", "error", …).
	HAManaged bool   `json:"ha_managed"`
	HAState   string `json:"ha_state,omitempty"`
	// AgentEnabled is true when the QEMU guest agent is enabled in the VM's
	// config (not proof that it runs). Always false for containers.
	AgentEnabled bool     `json:"agent_enabled"`
	Tags         []string `json:"tags"`
	// RunningQEMU and RunningMachine are the QEMU version and machine type
	// of a running VM.
	RunningQEMU    string `json:"running_qemu,omitempty"`
	RunningMachine string `json:"running_machine,omitempty"`
}

// rawGuestStatusFull is status/current with the usage figures; the
// embedded rawGuestStatus is what preconditions read.
type rawGuestStatusFull struct {
	rawGuestStatus
	CPU            pve.Float  `json:"cpu"`
	CPUs           pve.Int    `json:"cpus"`
	Mem            pve.Int    `json:"mem"`
	MaxMem         pve.Int    `json:"maxmem"`
	Disk           pve.Int    `json:"disk"`
	MaxDisk        pve.Int    `json:"maxdisk"`
	NetIn          pve.Int    `json:"netin"`
	NetOut         pve.Int    `json:"netout"`
	DiskRead       pve.Int    `json:"diskread"`
	DiskWrite      pve.Int    `json:"diskwrite"`
	Agent          pve.Bool   `json:"agent"`
	Tags           pve.String `json:"tags"`
	RunningQEMU    pve.String `json:"running-qemu"`
	RunningMachine pve.String `json:"running-machine"`
}

// GuestStatus reads one guest's status/current: power state (a paused VM
// shows as running with QMPStatus "paused"), usage, lock, template, HA and
// guest-agent flags, name and tags. The node must be on the allowlist;
// nothing is sent otherwise. One GET.
func (c *Client) GuestStatus(ctx context.Context, in GuestStatusInput) (*GuestStatusResult, error) {
	const op = OpGuestStatus
	start := time.Now()
	attrs, err := c.openGuestRead(ctx, op, start, in, in.GuestRef)
	if err != nil {
		return nil, err
	}
	var raw rawGuestStatusFull
	dec := &pve.Decoder{Data: &raw, Decode: func(body []byte) bool {
		var r rawGuestStatusFull // declined halfway, raw stays as encoding/json finds it
		if !decodeGuestStatus(body, &r) {
			return false
		}
		raw = r
		return true
	}}
	if err := c.get(ctx, statusPath(in.Target()), nil, dec); err != nil {
		return nil, c.logged(ctx, op, start, err, attrs...)
	}
	res := &GuestStatusResult{
		Node:      in.Node,
		Type:      in.Type,
		VMID:      in.VMID,
		Name:      line(string(raw.Name), maxNameLen),
		Status:    line(string(raw.Status), 16),
		QMPStatus: line(string(raw.QMPStatus), 16),
		Uptime:    int64(raw.Uptime),
		CPU:       float64(raw.CPU),
		CPUs:      int(raw.CPUs),
		Mem:       nonNegative(raw.Mem),
		MaxMem:    nonNegative(raw.MaxMem),
		Disk:      nonNegative(raw.Disk),
		MaxDisk:   nonNegative(raw.MaxDisk),
		NetIn:     nonNegative(raw.NetIn),
		NetOut:    nonNegative(raw.NetOut),
		DiskRead:  nonNegative(raw.DiskRead),
		DiskWrite: nonNegative(raw.DiskWrite),
		Lock:      line(string(raw.Lock), 32),
		Template:  bool(raw.Template),
		HAManaged: bool(raw.HA.Managed),
		HAState:   line(string(raw.HA.State), 32),
		Tags:      capTags(string(raw.Tags)),
	}
	if in.Type == TypeQEMU {
		res.AgentEnabled = bool(raw.Agent)
		res.RunningQEMU = line(string(raw.RunningQEMU), 64)
		res.RunningMachine = line(string(raw.RunningMachine), 64)
	} else {
		res.QMPStatus = ""
	}
	res.Paused = res.Status == "running" && res.QMPStatus == "paused"
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// statusPath is the guest's status/current path.
func statusPath(t Target) string { return guestPath(t, "status", "current") }
