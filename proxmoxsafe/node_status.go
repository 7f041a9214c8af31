package proxmoxsafe

import (
	"context"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpNodeStatus is the name of [Client.NodeStatus].
const OpNodeStatus Operation = "NodeStatus"

// nodeStatusOp declares [Client.NodeStatus].
var nodeStatusOp = operation{info: OperationInfo{
	Name:         OpNodeStatus,
	Method:       "GET",
	Route:        "/nodes/{node}/status",
	NodeTargeted: true,
	Privileges: []Privilege{
		{Path: pathNode, Name: "Sys.Audit"},
	},
}}

// NodeStatusInput selects the node [Client.NodeStatus] reports on.
type NodeStatusInput struct {
	// Node must be on the policy's node allowlist.
	Node string `json:"node" validate:"required,pve_node"`
}

// NodeStatusResult is what [Client.NodeStatus] returns. Sizes are bytes.
type NodeStatusResult struct {
	Node string `json:"node"`
	// Uptime is in seconds.
	Uptime int64 `json:"uptime"`
	// CPU is the current CPU usage as a fraction of all cores (0…1).
	CPU float64 `json:"cpu"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// CPUModel is the CPU model name, sanitized.
	CPUModel string `json:"cpu_model,omitempty"`
	// LoadAvg holds the 1, 5 and 15 minute load averages.
	LoadAvg [3]float64 `json:"loadavg"`
	Memory  Usage      `json:"memory"`
	Swap    Usage      `json:"swap"`
	RootFS  Usage      `json:"rootfs"`
	// Kernel is the running kernel release, e.g. "6.8.12-4-pve".
	Kernel string `json:"kernel,omitempty"`
	// PVEVersion is the node's pve-manager version string.
	PVEVersion string `json:"pve_version,omitempty"`
}

// Usage is a used/total pair in bytes.
type Usage struct {
	Used  uint64 `json:"used"`
	Total uint64 `json:"total"`
}

type rawUsage struct {
	Total pve.Int `json:"total"`
	Used  pve.Int `json:"used"`
}

type rawNodeStatus struct {
	Uptime     pve.Int     `json:"uptime"`
	CPU        pve.Float   `json:"cpu"`
	LoadAvg    []pve.Float `json:"loadavg"`
	Memory     rawUsage    `json:"memory"`
	Swap       rawUsage    `json:"swap"`
	RootFS     rawUsage    `json:"rootfs"`
	KVersion   pve.String  `json:"kversion"`
	PVEVersion pve.String  `json:"pveversion"`
	CPUInfo    struct {
		CPUs  pve.Int    `json:"cpus"`
		Model pve.String `json:"model"`
	} `json:"cpuinfo"`
	CurrentKernel *struct {
		Release pve.String `json:"release"`
	} `json:"current-kernel"`
}

// NodeStatus reports one node's uptime, CPU, load, memory, swap, root file
// system, kernel and pve-manager version. The node must be on the policy's
// allowlist; nothing is sent otherwise. It does not enumerate storage.
func (c *Client) NodeStatus(ctx context.Context, in NodeStatusInput) (*NodeStatusResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, "NodeStatus", start, err)
	}
	if err := c.policy.checkNode(in.Node); err != nil {
		return nil, c.logged(ctx, "NodeStatus", start, err)
	}
	var raw rawNodeStatus
	if err := c.get(ctx, pve.Path("nodes", in.Node, "status"), nil, &raw); err != nil {
		return nil, c.logged(ctx, "NodeStatus", start, err)
	}
	res := &NodeStatusResult{
		Node:       in.Node,
		Uptime:     int64(raw.Uptime),
		CPU:        float64(raw.CPU),
		CPUs:       int(raw.CPUInfo.CPUs),
		CPUModel:   line(string(raw.CPUInfo.Model), 128),
		Memory:     usage(raw.Memory),
		Swap:       usage(raw.Swap),
		RootFS:     usage(raw.RootFS),
		Kernel:     line(kernelRelease(raw), 128),
		PVEVersion: line(string(raw.PVEVersion), 128),
	}
	for i := 0; i < len(raw.LoadAvg) && i < 3; i++ {
		res.LoadAvg[i] = float64(raw.LoadAvg[i])
	}
	c.logged(ctx, "NodeStatus", start, nil)
	return res, nil
}

func usage(u rawUsage) Usage {
	return Usage{Used: nonNegative(u.Used), Total: nonNegative(u.Total)}
}

// kernelRelease prefers current-kernel.release (PVE 8+), else takes the
// release out of kversion ("Linux 6.8.12-4-pve #1 SMP …").
func kernelRelease(raw rawNodeStatus) string {
	if raw.CurrentKernel != nil && raw.CurrentKernel.Release != "" {
		return string(raw.CurrentKernel.Release)
	}
	f := strings.Fields(string(raw.KVersion))
	if len(f) >= 2 && f[0] == "Linux" {
		return f[1]
	}
	return string(raw.KVersion)
}
