package proxmoxsafe

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpListStorage is the name of [Client.ListStorage].
const OpListStorage Operation = "ListStorage"

// listStorageOp declares [Client.ListStorage].
var listStorageOp = operation{info: OperationInfo{
	Name:   OpListStorage,
	Method: "GET",
	Route:  "/nodes/{node}/storage",
	Privileges: []Privilege{
		{Path: pathStorage, Name: "Datastore.Audit",
			Note: "storages the token lacks it on are silently left out"},
	},
}}

// Caps on storage fields: ids are at most 64 characters in Proxmox, and a
// storage has a handful of content types.
const (
	maxStorageIDLen   = MaxStorageIDLen
	maxContentTypes   = 16
	maxStorageTypeLen = 32
)

// ListStorageInput selects what [Client.ListStorage] reports.
type ListStorageInput struct {
	// Node, when set, lists that node's storages from the node itself
	// (enabled, active, free space as the node sees it). The node must be on
	// the allowlist. Empty lists every node's storages cluster-wide.
	Node string `json:"node,omitempty" validate:"omitempty,pve_node"`
	// Limit caps the number of entries; 0 means [DefaultListLimit]; at most
	// [MaxListLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Default 200."`
}

// ListStorageResult is what [Client.ListStorage] returns: one entry per
// storage and node, ordered by node, then storage id.
type ListStorageResult struct {
	// Scope is "node" (read from the node) or "cluster" (from
	// /cluster/resources).
	Scope    string        `json:"scope"`
	Storages []StorageInfo `json:"storages"`
	// Total counts every entry, including those beyond Limit.
	Total int `json:"total"`
}

// StorageInfo is one storage as one node sees it. Sizes are bytes. It never
// carries storage configuration (servers, user names, paths, secrets).
type StorageInfo struct {
	// Storage is the storage id, e.g. "local-lvm".
	Storage string `json:"storage"`
	Node    string `json:"node"`
	// Type is the plugin type: dir, lvmthin, zfspool, nfs, cifs, pbs, rbd, cephfs, …
	Type string `json:"type"`
	// Content lists the content types it holds: images, rootdir, backup, iso, vztmpl, snippets, import.
	Content []string `json:"content"`
	// Shared storages show the same content on every node.
	Shared bool `json:"shared"`
	// Enabled is false for a storage disabled in the configuration. The
	// cluster-wide listing only includes enabled storages.
	Enabled bool `json:"enabled"`
	// Active is true when the node can access the storage right now.
	Active bool   `json:"active"`
	Used   uint64 `json:"used"`
	Total  uint64 `json:"total"`
	Avail  uint64 `json:"avail"`
}

type rawNodeStorage struct {
	Storage pve.String `json:"storage"`
	Type    pve.String `json:"type"`
	Content pve.String `json:"content"`
	Shared  pve.Bool   `json:"shared"`
	Enabled *pve.Bool  `json:"enabled"`
	Active  pve.Bool   `json:"active"`
	Used    pve.Int    `json:"used"`
	Total   pve.Int    `json:"total"`
	Avail   pve.Int    `json:"avail"`
}

type rawStorageResource struct {
	Type       string     `json:"type"`
	Storage    pve.String `json:"storage"`
	Node       pve.String `json:"node"`
	PluginType pve.String `json:"plugintype"`
	Status     pve.String `json:"status"`
	Shared     pve.Bool   `json:"shared"`
	Content    pve.String `json:"content"`
	Disk       pve.Int    `json:"disk"`
	MaxDisk    pve.Int    `json:"maxdisk"`
}

// ListStorage lists storages with their type, content types, sharing,
// state and usage.
//
// With a Node it reads GET /nodes/{node}/storage, and the node must be on
// the policy's allowlist (nothing is sent otherwise). Without one it reads
// /cluster/resources?type=storage: that cluster-wide read is not limited by
// the node allowlist (like [Client.ListGuests]; it names storages but reads
// nothing from inside a node), and Proxmox itself leaves out storages the
// token lacks Datastore.Audit on. It never reads the storage configuration
// (GET /storage), whose entries carry server names, user names and paths.
func (c *Client) ListStorage(ctx context.Context, in ListStorageInput) (*ListStorageResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, "ListStorage", start, err)
	}
	if in.Node != "" {
		if err := c.policy.checkNode(in.Node); err != nil {
			return nil, c.logged(ctx, "ListStorage", start, err, nodeAttr(in.Node))
		}
	}
	res := &ListStorageResult{Scope: "cluster", Storages: []StorageInfo{}}
	var all []StorageInfo
	if in.Node != "" {
		res.Scope = "node"
		var raw []rawNodeStorage
		if err := c.get(ctx, pve.Path("nodes", in.Node, "storage"), nil, &raw); err != nil {
			return nil, c.logged(ctx, "ListStorage", start, err, nodeAttr(in.Node))
		}
		for _, r := range raw {
			s := StorageInfo{
				Storage: line(string(r.Storage), maxStorageIDLen),
				Node:    in.Node,
				Type:    line(string(r.Type), maxStorageTypeLen),
				Content: contentList(string(r.Content)),
				Shared:  bool(r.Shared),
				Enabled: r.Enabled == nil || bool(*r.Enabled),
				Active:  bool(r.Active),
				Used:    nonNegative(r.Used),
				Total:   nonNegative(r.Total),
				Avail:   nonNegative(r.Avail),
			}
			all = append(all, s)
		}
	} else {
		var raw cappedRows[rawStorageResource]
		if err := c.get(ctx, "/cluster/resources", url.Values{"type": {"storage"}}, &raw); err != nil {
			return nil, c.logged(ctx, "ListStorage", start, err)
		}
		for _, r := range raw {
			if r.Type != "storage" {
				continue
			}
			total, used := nonNegative(r.MaxDisk), nonNegative(r.Disk)
			all = append(all, StorageInfo{
				Storage: line(string(r.Storage), maxStorageIDLen),
				Node:    line(string(r.Node), 64),
				Type:    line(string(r.PluginType), maxStorageTypeLen),
				Content: contentList(string(r.Content)),
				Shared:  bool(r.Shared),
				Enabled: true, // /cluster/resources lists enabled storages only
				Active:  string(r.Status) == "available",
				Used:    used,
				Total:   total,
				Avail:   total - min(used, total),
			})
		}
	}
	slices.SortFunc(all, func(a, b StorageInfo) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), strings.Compare(a.Storage, b.Storage))
	})
	res.Total = len(all)
	res.Storages = append(res.Storages, all[:min(len(all), limitOr(in.Limit))]...)
	c.logged(ctx, "ListStorage", start, nil)
	return res, nil
}

// contentList splits Proxmox's comma-separated content types, sanitized
// and bounded.
func contentList(s string) []string {
	out := []string{}
	for ct := range strings.SplitSeq(s, ",") {
		ct = line(strings.TrimSpace(ct), 32)
		if ct == "" || len(out) == maxContentTypes {
			continue
		}
		out = append(out, ct)
	}
	return out
}

// limitOr returns the effective page size for a validated Limit.
func limitOr(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return min(limit, MaxListLimit)
}
