package proxmoxsafe

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// MigratePrecheck is Proxmox's own answer to "can this guest move?" (GET
// …/migrate?target=…, "Get preconditions for migration"), as a migration
// plan shows it, with the blockers [Client.MigrateGuest] found in it.
// Names and volume ids come from Proxmox: sanitized, capped, data.
type MigratePrecheck struct {
	// Available is false when this Proxmox has no precheck for the guest
	// type: containers before PVE 9 (their GET …/migrate does not exist).
	// The other checks still ran; Note says so.
	Available bool `json:"available"`
	// Running is the guest's power state as the precheck saw it.
	Running bool `json:"running"`
	// AllowedNodes are the nodes Proxmox allows as targets (by storage;
	// an offline node can be listed). PVE 7 lists nodes only for a
	// stopped VM.
	AllowedNodes []string `json:"allowed_nodes"`
	// NotAllowedNodes maps a node to why Proxmox does not allow it
	// (storages or mapped devices it lacks, HA rules).
	NotAllowedNodes map[string]string `json:"not_allowed_nodes,omitempty"`
	// LocalDisks are the VM's volumes on node-local storage: they must be
	// copied to the target (with_local_disks).
	LocalDisks []MigrateLocalDisk `json:"local_disks"`
	// LocalResources are host devices (PCI, USB) that pin the VM to its node.
	LocalResources []string `json:"local_resources"`
	// MappedResources are devices through cluster-wide mappings.
	MappedResources []string `json:"mapped_resources,omitempty"`
	// Blockers say what stops a migration to the requested target, one
	// sentence each; empty when nothing does.
	Blockers []string `json:"blockers"`
	// Note is a remark, e.g. that the precheck does not exist.
	Note string `json:"note,omitempty"`
}

// MigrateLocalDisk is one local volume of a [MigratePrecheck].
type MigrateLocalDisk struct {
	VolID string `json:"volid"`
	Size  int64  `json:"size"`
}

// rawMigratePrecheck is the answer of GET …/migrate. VMs spell the lists
// with underscores, containers (PVE 9) with hyphens.
type rawMigratePrecheck struct {
	Running         pve.Bool                   `json:"running"`
	AllowedNodes    []pve.String               `json:"allowed_nodes"`
	AllowedNodesCT  []pve.String               `json:"allowed-nodes"`
	NotAllowed      map[string]rawNotAllowed   `json:"not_allowed_nodes"`
	NotAllowedCT    map[string]rawNotAllowed   `json:"not-allowed-nodes"`
	LocalDisks      []rawLocalDisk             `json:"local_disks"`
	LocalResources  []pve.String               `json:"local_resources"`
	MappedResources []pve.String               `json:"mapped-resources"`
	MappedInfo      map[string]rawMappedDevice `json:"mapped-resource-info"`
}

type rawNotAllowed struct {
	UnavailableStorages  []pve.String `json:"unavailable_storages"`
	UnavailableResources []pve.String `json:"unavailable-resources"`
	BlockingHA           []struct {
		SID   pve.String `json:"sid"`
		Cause pve.String `json:"cause"`
	} `json:"blocking-ha-resources"`
}

type rawLocalDisk struct {
	VolID pve.String `json:"volid"`
	Size  pve.Int    `json:"size"`
}

type rawMappedDevice struct {
	LiveMigration pve.Bool `json:"live-migration"`
}

// maxPrecheckItems caps each list of a precheck answer.
const maxPrecheckItems = 64

// migratePrecheck asks Proxmox's precheck about moving the guest to in's
// target and lists the blockers. A container on PVE before 9 has no
// precheck (501): the answer then says so and blocks nothing.
func (c *Client) migratePrecheck(ctx context.Context, t Target, in MigrateGuestInput) (*MigratePrecheck, error) {
	var raw rawMigratePrecheck
	err := c.get(ctx, guestPath(t, "migrate"), url.Values{"target": {in.TargetNode}}, &raw)
	var ae *APIError
	if t.Type == TypeLXC && errors.As(err, &ae) && ae.StatusCode == http.StatusNotImplemented {
		return &MigratePrecheck{AllowedNodes: []string{}, LocalDisks: []MigrateLocalDisk{}, LocalResources: []string{}, Blockers: []string{},
			Note: "this Proxmox VE has no migration precheck for containers (it came with PVE 9); only this server's own checks ran"}, nil
	}
	if err != nil {
		return nil, err
	}
	p := &MigratePrecheck{
		Available:       true,
		Running:         bool(raw.Running),
		AllowedNodes:    precheckNames(append(raw.AllowedNodes, raw.AllowedNodesCT...)),
		LocalResources:  precheckNames(raw.LocalResources),
		MappedResources: precheckNames(raw.MappedResources),
		LocalDisks:      []MigrateLocalDisk{},
		Blockers:        []string{},
	}
	for _, d := range raw.LocalDisks[:min(len(raw.LocalDisks), maxPrecheckItems)] {
		p.LocalDisks = append(p.LocalDisks, MigrateLocalDisk{VolID: line(string(d.VolID), 128), Size: int64(d.Size)})
	}
	notAllowed := raw.NotAllowed
	if notAllowed == nil {
		notAllowed = raw.NotAllowedCT
	}
	for node, why := range notAllowed {
		if len(p.NotAllowedNodes) >= maxPrecheckItems {
			break
		}
		if p.NotAllowedNodes == nil {
			p.NotAllowedNodes = map[string]string{}
		}
		p.NotAllowedNodes[line(node, MaxNodeLen)] = why.reason()
	}
	p.Blockers = p.blockers(in, raw.MappedInfo)
	return p, nil
}

// precheckNames sanitizes and caps a list of names; never nil.
func precheckNames(raw []pve.String) []string {
	out := []string{}
	for _, s := range raw[:min(len(raw), maxPrecheckItems)] {
		out = append(out, line(string(s), 128))
	}
	return out
}

// reason says in words why Proxmox does not allow a node.
func (n rawNotAllowed) reason() string {
	var parts []string
	if len(n.UnavailableStorages) > 0 {
		parts = append(parts, "storage not available there: "+strings.Join(precheckNames(n.UnavailableStorages), ", "))
	}
	if len(n.UnavailableResources) > 0 {
		parts = append(parts, "mapped devices not available there: "+strings.Join(precheckNames(n.UnavailableResources), ", "))
	}
	for _, h := range n.BlockingHA[:min(len(n.BlockingHA), maxPrecheckItems)] {
		parts = append(parts, "HA resource "+line(string(h.SID), 64)+" blocks it ("+line(string(h.Cause), 64)+")")
	}
	if len(parts) == 0 {
		return "not allowed (no reason given)"
	}
	return strings.Join(parts, "; ")
}

// blockers are what in the answer stops a migration to in.TargetNode.
func (p *MigratePrecheck) blockers(in MigrateGuestInput, mapped map[string]rawMappedDevice) []string {
	out := []string{}
	if why, ok := p.NotAllowedNodes[in.TargetNode]; ok {
		out = append(out, "Proxmox does not allow node "+in.TargetNode+" as a target: "+why)
	} else if len(p.AllowedNodes) > 0 && !slices.Contains(p.AllowedNodes, in.TargetNode) {
		out = append(out, "node "+in.TargetNode+" is not among the nodes Proxmox allows ("+strings.Join(p.AllowedNodes, ", ")+")")
	}
	if len(p.LocalDisks) > 0 && !in.WithLocalDisks {
		vols := make([]string, len(p.LocalDisks))
		for i, d := range p.LocalDisks {
			vols[i] = d.VolID
		}
		out = append(out, "the VM has disks on node-local storage ("+strings.Join(vols, ", ")+"): ask again with with_local_disks to copy them to the target")
	}
	var pinned []string
	for _, r := range p.LocalResources {
		if !slices.Contains(p.MappedResources, r) {
			pinned = append(pinned, r)
		}
	}
	if len(pinned) > 0 {
		out = append(out, "the VM uses host devices of this node ("+strings.Join(pinned, ", ")+"), which Proxmox does not migrate")
	}
	if p.Running {
		var fixed []string
		for _, r := range p.MappedResources {
			if !bool(mapped[r].LiveMigration) {
				fixed = append(fixed, r)
			}
		}
		if len(fixed) > 0 {
			out = append(out, "the running VM uses mapped devices that cannot be live-migrated ("+strings.Join(fixed, ", ")+"): stop it first")
		}
	}
	return out
}

// summary is the precheck in one line, for effects and refusals.
func (p *MigratePrecheck) summary() string {
	if !p.Available {
		return p.Note
	}
	if len(p.Blockers) > 0 {
		return "Proxmox's precheck reports: " + strings.Join(p.Blockers, "; ")
	}
	s := "Proxmox's precheck reports no blocker"
	if len(p.LocalDisks) > 0 {
		s += " (" + strconv.Itoa(len(p.LocalDisks)) + " local disk(s) will be copied)"
	}
	return s
}

// checkTargetNode refuses a target that is not an online cluster member,
// from /cluster/resources (node entries need no privilege).
func checkTargetNode(ctx context.Context, t Target, s GuestState, target string, nodes *prefetch[cappedRows[rawNodeResource]]) error {
	raw, err := nodes.get(ctx)
	if err != nil {
		return err
	}
	for _, r := range raw {
		if r.Type == "node" && string(r.Node) == target {
			if st := string(r.Status); st != "online" {
				return refuse(ErrPrecondition, "the target node %s is %s, not online; %s cannot move there now", target, line(st, 16), describe(t, s))
			}
			return nil
		}
	}
	return refuse(ErrPrecondition, "the target node %s is not a member of this cluster", target)
}

// nodeResources reads /cluster/resources?type=node.
func (c *Client) nodeResources(ctx context.Context) (cappedRows[rawNodeResource], error) {
	var raw cappedRows[rawNodeResource]
	if err := c.get(ctx, "/cluster/resources", url.Values{"type": {"node"}}, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}
