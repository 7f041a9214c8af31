package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// ToolClusterList is the fleet's list of its clusters. Only a server of
// several clusters (NewFleet) offers it, without a cluster parameter: it
// is about all of them.
const ToolClusterList = "cluster_list"

// fleetReadConcurrency bounds how many clusters a fleet read asks at
// once, and fleetReadTimeout how long it waits for one cluster: a cluster
// that does not answer is reported, not waited for.
const (
	fleetReadConcurrency = 16
	fleetReadTimeout     = 15 * time.Second
)

// ClusterListResult is what cluster_list returns.
type ClusterListResult struct {
	// Clusters are the fleet's clusters, in the order configured.
	Clusters []FleetClusterInfo `json:"clusters"`
	// Unreachable counts the clusters that could not be read.
	Unreachable int `json:"unreachable"`
}

// FleetClusterInfo is one cluster of cluster_list.
type FleetClusterInfo struct {
	// Name is the name calls use ([proxmoxsafe.Config.ClusterName]).
	Name string `json:"name"`
	// API is the API's address, scheme and host.
	API string `json:"api"`
	// Reachable is false when the cluster's status could not be read;
	// Error then says why.
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
	// PVEName is Proxmox's own cluster name ("" for a standalone node).
	PVEName string `json:"pve_name,omitempty"`
	// Version is the Proxmox VE version of the node that answered.
	Version string `json:"version,omitempty"`
	// Quorate, Nodes and NodesOnline are the cluster's quorum and members.
	Quorate     bool `json:"quorate"`
	Nodes       int  `json:"nodes"`
	NodesOnline int  `json:"nodes_online"`
	// Policy is what may be done there.
	Policy FleetPolicy `json:"policy"`
}

// FleetPolicy is the policy in force on one cluster of a fleet.
type FleetPolicy struct {
	// Profile names the classes: readonly, safe, responder, admin (with
	// "+ gateway-write"), or custom.
	Profile string `json:"profile"`
	// Classes are the mutation classes enabled; none when read-only.
	Classes []string `json:"classes"`
	// ReadOnly: only reads are possible.
	ReadOnly bool `json:"read_only"`
	// AllowedNodes are the nodes mutations and node reads may target.
	AllowedNodes []string `json:"allowed_nodes"`
	// Protected counts the protection rules (guests by VMID, name, tag,
	// pool) no mutation may touch.
	Protected int `json:"protected"`
	// Approvals are each enabled class's approval levels, in order.
	Approvals map[string][]string `json:"approvals,omitempty"`
}

func clusterListTool() toolDef {
	return readTool(ToolInfo{Name: ToolClusterList, Title: "List clusters",
		Description: "The clusters this server serves: name (what cluster takes), API host, version, quorum, reachable, and the policy in force (profile, classes, read-only, allowed nodes, protection rules, approvals). Call it first to tell clusters apart."},
		ops(proxmoxsafe.OpClusterStatus), (*adapter).clusterList, nil)
}

func (a *adapter) clusterList(ctx context.Context, _ noArgs) (string, *ClusterListResult, error) {
	res := &ClusterListResult{Clusters: make([]FleetClusterInfo, len(a.fleet))}
	fleetEach(ctx, a.fleet, func(ctx context.Context, i int, c *proxmoxsafe.Client) {
		info := FleetClusterInfo{Name: c.Cluster().Name, API: c.Cluster().URL, Policy: fleetPolicyOf(c, a.readOnly)}
		st, err := c.ClusterStatus(ctx)
		if err != nil {
			info.Error = clusterError(err)
		} else {
			info.Reachable, info.PVEName, info.Version, info.Quorate = true, st.Name, st.Version, st.Quorate
			info.Nodes = len(st.Nodes)
			for _, n := range st.Nodes {
				if n.Online {
					info.NodesOnline++
				}
			}
		}
		res.Clusters[i] = info
	})
	for _, c := range res.Clusters {
		if !c.Reachable {
			res.Unreachable++
		}
	}
	summary := fmt.Sprintf("%d clusters", len(res.Clusters))
	if res.Unreachable > 0 {
		summary += fmt.Sprintf(", %d unreachable", res.Unreachable)
	}
	return summary, res, nil
}

// fleetEach runs fn for every client, at most fleetReadConcurrency at
// once, each with its own deadline, and returns when all are done. The
// caller's cancellation reaches every call.
func fleetEach(ctx context.Context, clients []*proxmoxsafe.Client, fn func(ctx context.Context, i int, c *proxmoxsafe.Client)) {
	sem := make(chan struct{}, fleetReadConcurrency)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, fleetReadTimeout)
			defer cancel()
			fn(cctx, i, c)
		})
	}
	wg.Wait()
}

// clusterError is an unreachable cluster's reason: the library's error
// (sanitized, without secrets), capped.
func clusterError(err error) string { return clean(err.Error(), 256) }

// fleetPolicyOf is the policy in force on c, readOnly being the server's
// own read-only option.
func fleetPolicyOf(c *proxmoxsafe.Client, readOnly bool) FleetPolicy {
	pol := c.Policy()
	p := FleetPolicy{ReadOnly: pol.ReadOnly || readOnly || len(pol.Classes) == 0, Classes: []string{},
		AllowedNodes: slices.Clone(pol.AllowedNodes),
		Protected:    len(pol.ProtectedGuests) + len(pol.ProtectedNames) + len(pol.ProtectedTags) + len(pol.ProtectedPools)}
	if p.AllowedNodes == nil {
		p.AllowedNodes = []string{}
	}
	title := serverTitle(c, &Options{ReadOnly: readOnly})
	p.Profile = strings.TrimSuffix(strings.TrimPrefix(title, "Proxmox VE ("), ")")
	if p.Profile == "read-only" {
		p.Profile = string(proxmoxsafe.ProfileReadOnly)
	}
	if p.Profile == "custom policy" {
		p.Profile = "custom"
	}
	if p.ReadOnly {
		return p
	}
	p.Approvals = map[string][]string{}
	for _, cl := range pol.Classes {
		p.Classes = append(p.Classes, string(cl))
		levels := pol.Approvals[cl]
		if len(levels) == 0 {
			levels = proxmoxsafe.DefaultApprovals(cl)
		}
		for _, l := range levels {
			p.Approvals[string(cl)] = append(p.Approvals[string(cl)], string(l))
		}
	}
	return p
}
