package proxmoxsafe

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpGuestAgentInfo is the name of [Client.GuestAgentInfo].
const OpGuestAgentInfo Operation = "GuestAgentInfo"

// guestAgentInfoOp declares [Client.GuestAgentInfo]: its first request is
// get-osinfo; get-host-name, get-fsinfo and get-time follow when the agent
// answers.
var guestAgentInfoOp = operation{info: OperationInfo{
	Name:         OpGuestAgentInfo,
	Method:       "GET",
	Route:        "/nodes/{node}/qemu/{vmid}/agent/get-osinfo",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.GuestAgent.Audit", Optional: true,
			Note: "PVE 7 and 8: VM.Monitor; without it the VM is reported as no_permission (an operator may leave agent data out on purpose)"},
	},
}}

// Bounds of [Client.GuestAgentInfo].
const (
	// MaxAgentFileSystems caps the file systems reported, by mount point.
	MaxAgentFileSystems = 32
	maxMountpointLen    = 256
)

// GuestAgentInfoInput names the VM whose guest agent [Client.GuestAgentInfo]
// asks. Containers have no guest agent.
type GuestAgentInfoInput struct {
	Node string `json:"node" validate:"required,pve_node"`
	VMID int    `json:"vmid" validate:"required,pve_vmid"`
}

// GuestAgentInfoResult is what a VM's QEMU guest agent says about the
// guest. All of it is written by whoever controls the guest: sanitized
// data, never instructions.
type GuestAgentInfoResult struct {
	Node string `json:"node"`
	VMID int    `json:"vmid"`
	// Unavailable is set, with Detail (Proxmox's message, sanitized), when
	// the agent could not be asked at all: one of the Unavailable…
	// constants (stopped, agent_not_configured, agent_not_running,
	// no_permission, node_unreachable, error). Nothing else is set then.
	Unavailable string `json:"unavailable,omitempty"`
	Detail      string `json:"detail,omitempty"`
	// OS is get-osinfo's answer; nil when the agent does not know it.
	OS       *AgentOS `json:"os,omitempty"`
	HostName string   `json:"host_name,omitempty"`
	// FileSystems are get-fsinfo's file systems by mount point, at most
	// [MaxAgentFileSystems]; FileSystemsTotal counts all of them.
	FileSystems      []AgentFileSystem `json:"file_systems"`
	FileSystemsTotal int               `json:"file_systems_total"`
	// Time is the guest's clock (get-time) in RFC 3339, UTC;
	// ClockOffsetSeconds is how far it is ahead of this server's clock
	// (negative: behind), give or take half the request's round trip.
	Time               string   `json:"time,omitempty"`
	ClockOffsetSeconds *float64 `json:"clock_offset_seconds,omitempty"`
	// Failed lists, as "command: message", the commands that failed while
	// the agent answered others (an old agent lacks get-osinfo, Windows
	// file systems it cannot stat, a 5 s command timeout).
	Failed []string `json:"failed,omitempty"`
}

// AgentOS is the guest's operating system as its agent reports it
// (/etc/os-release on Linux, the registry on Windows).
type AgentOS struct {
	ID         string `json:"id,omitempty"`
	Name       string `json:"name,omitempty"`
	PrettyName string `json:"pretty_name,omitempty"`
	Version    string `json:"version,omitempty"`
	VersionID  string `json:"version_id,omitempty"`
	// Kernel is the kernel release ("6.12.48+deb13-amd64", "10.0" on
	// Windows); Machine the architecture ("x86_64").
	Kernel  string `json:"kernel,omitempty"`
	Machine string `json:"machine,omitempty"`
}

// AgentFileSystem is one mounted file system inside the guest. The byte
// counts are absent when the agent could not stat it.
type AgentFileSystem struct {
	Mountpoint string `json:"mountpoint"`
	Type       string `json:"type"`
	// Name is the device or volume ("sda1", a Windows volume path).
	Name       string `json:"name,omitempty"`
	UsedBytes  uint64 `json:"used_bytes,omitempty"`
	TotalBytes uint64 `json:"total_bytes,omitempty"`
	// UsedPercent is UsedBytes of TotalBytes, rounded to a tenth.
	UsedPercent float64 `json:"used_percent,omitempty"`
}

type rawOSInfo struct {
	ID            pve.String `json:"id"`
	Name          pve.String `json:"name"`
	PrettyName    pve.String `json:"pretty-name"`
	Version       pve.String `json:"version"`
	VersionID     pve.String `json:"version-id"`
	KernelRelease pve.String `json:"kernel-release"`
	Machine       pve.String `json:"machine"`
}

type rawFSInfo struct {
	Name       pve.String `json:"name"`
	Mountpoint pve.String `json:"mountpoint"`
	Type       pve.String `json:"type"`
	UsedBytes  pve.Int    `json:"used-bytes"`
	TotalBytes pve.Int    `json:"total-bytes"`
}

// GuestAgentInfo asks a VM's QEMU guest agent for its OS, host name, file
// systems with their usage and its clock. The node must be on the
// allowlist; nothing is sent otherwise. get-osinfo goes first: when the
// VM is stopped, has no agent configured, or its agent does not answer,
// the result says so in Unavailable and nothing more is sent (a hung
// agent costs Proxmox's 3 s wait once, not four times); otherwise the
// other three are read at once. A command the agent fails is listed in
// Failed; the call fails only for invalid input or the policy.
func (c *Client) GuestAgentInfo(ctx context.Context, in GuestAgentInfoInput) (*GuestAgentInfoResult, error) {
	const op = OpGuestAgentInfo
	start := time.Now()
	t := Target{Node: in.Node, Type: TypeQEMU, VMID: in.VMID}
	attrs, err := c.openGuestRead(ctx, op, start, in, GuestRef{Node: in.Node, Type: TypeQEMU, VMID: in.VMID})
	if err != nil {
		return nil, err
	}
	res := &GuestAgentInfoResult{Node: in.Node, VMID: in.VMID, FileSystems: []AgentFileSystem{}}
	failed := func(cmd string, err error) {
		_, msg := agentUnavailable(err)
		res.Failed = append(res.Failed, cmd+": "+msg)
	}
	var osinfo struct {
		Result rawOSInfo `json:"result"`
	}
	if err := c.get(ctx, guestPath(t, "agent", "get-osinfo"), nil, &osinfo); err != nil {
		if ctx.Err() != nil {
			return nil, c.logged(ctx, op, start, ctx.Err(), attrs...)
		}
		reason, msg := agentUnavailable(err)
		if reason != UnavailableAgentError {
			res.Unavailable, res.Detail = reason, msg
			c.logged(ctx, op, start, nil, attrs...)
			return res, nil
		}
		failed("get-osinfo", err)
	} else {
		o := osinfo.Result
		res.OS = &AgentOS{ID: line(string(o.ID), 64), Name: line(string(o.Name), 128), PrettyName: line(string(o.PrettyName), 128),
			Version: line(string(o.Version), 128), VersionID: line(string(o.VersionID), 64),
			Kernel: line(string(o.KernelRelease), 128), Machine: line(string(o.Machine), 32)}
	}

	var wg sync.WaitGroup
	var host struct {
		Result struct {
			HostName pve.String `json:"host-name"`
		} `json:"result"`
	}
	var fs struct {
		Result []rawFSInfo `json:"result"`
	}
	var clock struct {
		Result json.Number `json:"result"`
	}
	var hostErr, fsErr, timeErr error
	var sent, received time.Time
	wg.Go(func() { hostErr = c.get(ctx, guestPath(t, "agent", "get-host-name"), nil, &host) })
	wg.Go(func() { fsErr = c.get(ctx, guestPath(t, "agent", "get-fsinfo"), nil, &fs) })
	wg.Go(func() {
		sent = time.Now()
		timeErr = c.get(ctx, guestPath(t, "agent", "get-time"), nil, &clock)
		received = time.Now()
	})
	wg.Wait()
	if ctx.Err() != nil {
		return nil, c.logged(ctx, op, start, ctx.Err(), attrs...)
	}
	if hostErr != nil {
		failed("get-host-name", hostErr)
	} else {
		res.HostName = line(string(host.Result.HostName), 255)
	}
	if fsErr != nil {
		failed("get-fsinfo", fsErr)
	} else {
		res.FileSystems, res.FileSystemsTotal = agentFileSystems(fs.Result)
	}
	if timeErr != nil {
		failed("get-time", timeErr)
	} else if ns, err := clock.Result.Int64(); err == nil && ns > 0 {
		guest := time.Unix(0, ns).UTC()
		ours := sent.Add(received.Sub(sent) / 2)
		offset := math.Round(guest.Sub(ours).Seconds()*1000) / 1000
		res.Time, res.ClockOffsetSeconds = guest.Format(time.RFC3339Nano), &offset
	} else {
		res.Failed = append(res.Failed, "get-time: the agent answered no time")
	}
	c.logged(ctx, op, start, nil, attrs...)
	return res, nil
}

// agentFileSystems sanitizes, sorts by mount point and caps get-fsinfo's
// entries; it returns them and how many there were.
func agentFileSystems(raw []rawFSInfo) ([]AgentFileSystem, int) {
	out := make([]AgentFileSystem, 0, min(len(raw), MaxAgentFileSystems))
	for _, r := range raw {
		f := AgentFileSystem{Mountpoint: line(string(r.Mountpoint), maxMountpointLen), Type: line(string(r.Type), 32),
			Name: line(string(r.Name), 128), UsedBytes: nonNegative(r.UsedBytes), TotalBytes: nonNegative(r.TotalBytes)}
		if f.TotalBytes > 0 {
			f.UsedPercent = math.Round(float64(f.UsedBytes)/float64(f.TotalBytes)*1000) / 10
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b AgentFileSystem) int { return cmp.Compare(a.Mountpoint, b.Mountpoint) })
	return out[:min(len(out), MaxAgentFileSystems)], len(raw)
}
