package proxmoxsafe

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpClusterStatus is the name of [Client.ClusterStatus].
const OpClusterStatus Operation = "ClusterStatus"

// clusterStatusOp declares [Client.ClusterStatus].
var clusterStatusOp = operation{info: OperationInfo{
	Name:   OpClusterStatus,
	Method: "GET",
	Route:  "/cluster/status",
	Privileges: []Privilege{
		{Path: pathRoot, Name: "Sys.Audit"},
	},
}}

// ClusterStatusResult is what [Client.ClusterStatus] returns.
type ClusterStatusResult struct {
	// Name is the cluster name; empty for a standalone node.
	Name string `json:"name"`
	// Clustered is false for a standalone node (no corosync cluster).
	Clustered bool `json:"clustered"`
	// Quorate is true when the cluster has quorum. A standalone node is
	// always quorate.
	Quorate bool `json:"quorate"`
	// Version is the Proxmox VE version of the node that answered, e.g. "9.1.1".
	Version string `json:"version"`
	// Nodes lists every cluster member, ordered by name.
	Nodes []ClusterNode `json:"nodes"`
	// Warnings name what could not be read (e.g. usage figures); the rest
	// of the result is still valid. Empty when everything was read.
	Warnings []string `json:"warnings"`
}

// ClusterNode is one member of the cluster as /cluster/status reports it.
type ClusterNode struct {
	Name   string `json:"name"`
	NodeID int    `json:"nodeid"`
	Online bool   `json:"online"`
	IP     string `json:"ip,omitempty"`
	// Level is the subscription level ("c", "b", "s", "p"), empty without one.
	Level string `json:"level,omitempty"`
	// Local is true for the node that answered the API request.
	Local bool `json:"local"`
	// Usage is the node's CPU, memory, root disk and uptime from
	// /cluster/resources; absent when the node is offline, when the token
	// lacks Sys.Audit on it, or when the figures could not be read.
	Usage *NodeUsage `json:"usage,omitempty"`
	// Problem says in a few words why the node is offline or has no usage
	// figures; empty for a healthy node.
	Problem string `json:"problem,omitempty"`
}

type rawClusterStatusEntry struct {
	Type    string     `json:"type"`
	Name    pve.String `json:"name"`
	NodeID  pve.Int    `json:"nodeid"`
	Online  pve.Bool   `json:"online"`
	Quorate pve.Bool   `json:"quorate"`
	IP      pve.String `json:"ip"`
	Level   pve.String `json:"level"`
	Local   pve.Bool   `json:"local"`
}

type rawVersion struct {
	Version pve.String `json:"version"`
	Release pve.String `json:"release"`
}

// NodeUsage is a node's load as /cluster/resources reports it. Sizes are
// bytes, uptime seconds.
type NodeUsage struct {
	// CPU is the CPU usage as a fraction of all cores (0…1).
	CPU     float64 `json:"cpu"`
	MaxCPU  int     `json:"maxcpu"`
	Mem     uint64  `json:"mem"`
	MaxMem  uint64  `json:"maxmem"`
	Disk    uint64  `json:"disk"`
	MaxDisk uint64  `json:"maxdisk"`
	Uptime  int64   `json:"uptime"`
}

type rawNodeResource struct {
	Type    string     `json:"type"`
	Node    pve.String `json:"node"`
	Status  pve.String `json:"status"`
	CPU     pve.Float  `json:"cpu"`
	MaxCPU  pve.Int    `json:"maxcpu"`
	Mem     pve.Int    `json:"mem"`
	MaxMem  pve.Int    `json:"maxmem"`
	Disk    pve.Int    `json:"disk"`
	MaxDisk pve.Int    `json:"maxdisk"`
	Uptime  pve.Int    `json:"uptime"`
}

// maxWarnings bounds ClusterStatusResult.Warnings.
const maxWarnings = 8

// ClusterStatus reports the cluster's name, quorum, members, each member's
// usage (CPU, memory, root disk, uptime) and the Proxmox VE version. It
// reads /cluster/status, /version and /cluster/resources?type=node; it is
// cluster-wide and not limited by the node allowlist, since it names nodes
// but reads nothing from inside them.
//
// Only /cluster/status is essential. An offline or unreachable node, or a
// failed /version or /cluster/resources read (e.g. a 595/596 forwarding
// error), does not fail the call: the node gets a Problem and no Usage, and
// the failed read is named in Warnings. An expired context or a rejected
// token still fails the call.
//
// The three GETs are independent reads and are sent at once (the call
// takes about as long as the slowest, not the sum); errors are judged in
// the order above, so the result and the error are those of sending them
// one after another. When /cluster/status fails, the other two are
// cancelled and the call waits for them before returning.
func (c *Client) ClusterStatus(ctx context.Context) (*ClusterStatusResult, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		ver       rawVersion
		resources cappedRows[rawNodeResource]
		verErr    error
		resErr    error
		wg        sync.WaitGroup
	)
	wg.Go(func() { verErr = c.get(ctx, "/version", nil, &ver) })
	wg.Go(func() { resErr = c.get(ctx, "/cluster/resources", url.Values{"type": {"node"}}, &resources) })
	var entries []rawClusterStatusEntry
	if err := c.get(ctx, "/cluster/status", nil, &entries); err != nil {
		cancel()
		wg.Wait()
		return nil, c.logged(ctx, "ClusterStatus", start, err)
	}
	wg.Wait()
	res := &ClusterStatusResult{Nodes: []ClusterNode{}, Warnings: []string{}}
	if verErr != nil {
		if fatalRead(ctx, verErr) {
			return nil, c.logged(ctx, "ClusterStatus", start, verErr)
		}
		res.warn("the Proxmox VE version could not be read: " + verErr.Error())
	}
	res.Version = line(string(ver.Version), 64)
	if resErr != nil {
		if fatalRead(ctx, resErr) {
			return nil, c.logged(ctx, "ClusterStatus", start, resErr)
		}
		res.warn("per-node usage could not be read: " + resErr.Error())
	}
	usage := make(map[string]*rawNodeResource, len(resources))
	for i := range resources {
		if r := &resources[i]; r.Type == "node" {
			usage[string(r.Node)] = r
		}
	}
	quorate := true
	for _, e := range entries {
		switch e.Type {
		case "cluster":
			res.Clustered = true
			res.Name = line(string(e.Name), 64)
			quorate = bool(e.Quorate)
		case "node":
			n := ClusterNode{
				Name:   line(string(e.Name), 64),
				NodeID: int(e.NodeID),
				Online: bool(e.Online),
				IP:     line(string(e.IP), 64),
				Level:  line(string(e.Level), 16),
				Local:  bool(e.Local),
			}
			n.Usage, n.Problem = nodeUsage(n, usage[string(e.Name)], resErr != nil)
			res.Nodes = append(res.Nodes, n)
		}
	}
	res.Quorate = quorate
	slices.SortFunc(res.Nodes, func(a, b ClusterNode) int { return strings.Compare(a.Name, b.Name) })
	c.logged(ctx, "ClusterStatus", start, nil, slog.Int("warnings", len(res.Warnings)))
	return res, nil
}

// nodeUsage picks a node's usage figures and says why there are none.
func nodeUsage(n ClusterNode, r *rawNodeResource, readFailed bool) (*NodeUsage, string) {
	switch {
	case !n.Online:
		return nil, "offline: the cluster does not see this node, so it cannot be reached through the API"
	case readFailed:
		return nil, "usage unknown: /cluster/resources could not be read (see warnings)"
	case r == nil:
		return nil, "usage unknown: /cluster/resources does not list this node"
	case string(r.Status) != "online":
		return nil, "no current figures: /cluster/resources reports the node as " + line(string(r.Status), 16) + " (its status daemon may not be reporting)"
	case r.MaxCPU == 0 && r.MaxMem == 0:
		return nil, "usage not reported: the API token may lack Sys.Audit on /nodes/" + n.Name
	}
	return &NodeUsage{
		CPU:     float64(r.CPU),
		MaxCPU:  int(r.MaxCPU),
		Mem:     nonNegative(r.Mem),
		MaxMem:  nonNegative(r.MaxMem),
		Disk:    nonNegative(r.Disk),
		MaxDisk: nonNegative(r.MaxDisk),
		Uptime:  int64(r.Uptime),
	}, ""
}

// fatalRead reports whether a failed secondary read must fail the whole
// call: the caller gave up, or the token was rejected (then nothing else
// can be trusted either).
func fatalRead(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrUnauthorized)
}

// warn adds a warning, bounded and sanitized.
func (r *ClusterStatusResult) warn(msg string) {
	if len(r.Warnings) < maxWarnings {
		r.Warnings = append(r.Warnings, line(msg, maxErrorText))
	}
}
