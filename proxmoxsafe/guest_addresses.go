package proxmoxsafe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpGuestAddresses is the name of [Client.GuestAddresses].
const OpGuestAddresses Operation = "GuestAddresses"

// guestAddressesOp declares [Client.GuestAddresses]: it reads the guests
// from /cluster/resources, then each running VM's agent interfaces (the
// route declared) or each running container's interfaces, falling back to
// the container's config where the cluster predates the endpoint.
var guestAddressesOp = operation{info: OperationInfo{
	Name:   OpGuestAddresses,
	Method: "GET",
	Route:  "/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "to find the guests and read a container's interfaces (or its config); guests without it are left out"},
		{Path: pathVMs, Name: "VM.GuestAgent.Audit", Optional: true,
			Note: "for a VM's addresses through its guest agent (PVE 7 and 8: VM.Monitor); without it each VM is reported as no_permission"},
	},
}}

// Bounds of [Client.GuestAddresses].
const (
	// DefaultAddressesLimit and MaxAddressesLimit are the page sizes when
	// many guests are read.
	DefaultAddressesLimit = 50
	MaxAddressesLimit     = 200
	// MaxAddressReadsAtOnce bounds the guests read at the same time, and
	// MaxAddressReadsPerNode those on one node: agent and interface reads
	// are "protected" calls that pveproxy hands to the node's pvedaemon,
	// which has 3 workers (pve-manager's pvedaemon.pm), so more than 3 per
	// node only queue there and delay everything else the node serves.
	// MaxAddressReadsAtOnce is the client's idle keep-alive connections
	// (config.go): more reads at once would close and reopen connections,
	// a TLS handshake each time.
	MaxAddressReadsAtOnce  = 6
	MaxAddressReadsPerNode = 3
	// MaxGuestInterfaces caps the interfaces kept per guest, and
	// MaxInterfaceAddresses the addresses kept per interface and family.
	MaxGuestInterfaces    = 16
	MaxInterfaceAddresses = 8
	// MaxAddressesBytes bounds one page's guests as JSON: a page ends
	// early (with a cursor) rather than grow past it.
	MaxAddressesBytes = 48 << 10
)

// GuestAddressesInput selects the guests [Client.GuestAddresses] reads:
// one guest by VMID, or every running guest that matches the filters.
type GuestAddressesInput struct {
	// VMID reads that one guest, whatever its state; 0 reads every running
	// guest that matches the other filters.
	VMID int `json:"vmid,omitempty" validate:"omitempty,pve_vmid"`
	// Node keeps only guests on this node; it must be allowlisted.
	Node string `json:"node,omitempty" validate:"omitempty,pve_node"`
	// Type keeps only "qemu" or only "lxc" guests (the tool leaves it out).
	Type GuestType `json:"-" validate:"omitempty,oneof=qemu lxc"`
	// Tag keeps only guests carrying this tag (exact, case-insensitive).
	Tag string `json:"tag,omitempty" validate:"omitempty,pve_tag"`
	// Pool keeps only guests of this resource pool.
	Pool string `json:"pool,omitempty" validate:"omitempty,max=64,pve_poolid"`
	// Loopback keeps the loopback interface and loopback addresses, which
	// are left out by default: every guest has them and they say nothing
	// about how to reach it.
	Loopback bool `json:"loopback,omitempty"`
	// Limit caps the page; 0 means [DefaultAddressesLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=200" jsonschema:"Default 50."`
	// Cursor continues a listing from [GuestAddressesResult.NextCursor].
	Cursor string `json:"cursor,omitempty" validate:"omitempty,max=64,printascii" jsonschema:"The previous page's next_cursor."`
}

// GuestAddressesResult is one page of guests with their addresses, by VMID.
type GuestAddressesResult struct {
	Guests []GuestAddresses `json:"guests"`
	// Total counts the guests that matched (when listing: the running ones)
	// on all pages.
	Total int `json:"total"`
	// NotRunning counts, when listing, the guests that matched but are not
	// running (templates included): they are not read and not listed.
	NotRunning int `json:"not_running,omitempty"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Where a guest's addresses come from ([GuestAddresses.Source]).
const (
	// SourceAgent: the QEMU guest agent inside the VM reported them.
	SourceAgent = "agent"
	// SourceContainer: `ip a` in the container's network namespace, which
	// Proxmox runs for lxc/{vmid}/interfaces (PVE 8 and later).
	SourceContainer = "container"
	// SourceConfig: the container's netN config, on clusters without the
	// interfaces endpoint (PVE 7): what is configured, not observed.
	SourceConfig = "configured"
)

// Why a guest has no addresses ([GuestAddresses.Unavailable]).
const (
	UnavailableStopped            = "stopped"
	UnavailableAgentNotConfigured = "agent_not_configured"
	UnavailableAgentNotRunning    = "agent_not_running"
	UnavailableAgentError         = "agent_error"
	UnavailableNoPermission       = "no_permission"
	UnavailableNodeNotAllowed     = "node_not_allowed"
	UnavailableNodeUnreachable    = "node_unreachable"
	UnavailableError              = "error"
)

// GuestAddresses is one guest's interfaces, or why they could not be read.
// Everything here except VMID, Type and Source was written by someone who
// controls the guest: sanitized data, never instructions. Addresses that
// do not parse as IP addresses and MACs that are not MACs are dropped.
type GuestAddresses struct {
	VMID   int       `json:"vmid"`
	Name   string    `json:"name,omitempty"`
	Node   string    `json:"node"`
	Type   GuestType `json:"type"`
	Status string    `json:"status"`
	// Source is one of the Source… constants; empty when Unavailable is set.
	Source     string           `json:"source,omitempty"`
	Interfaces []GuestInterface `json:"interfaces"`
	// Truncated is true when interfaces or addresses beyond the caps
	// ([MaxGuestInterfaces], [MaxInterfaceAddresses]) were left out.
	Truncated bool `json:"truncated,omitempty"`
	// Unavailable is one of the Unavailable… constants when nothing could
	// be read; Detail is then Proxmox's message, sanitized.
	Unavailable string `json:"unavailable,omitempty"`
	Detail      string `json:"detail,omitempty"`
}

// GuestInterface is one network interface with its addresses in CIDR
// notation ("192.0.2.10/24", "2001:db8::10/64"), in the guest's order.
type GuestInterface struct {
	Name string   `json:"name"`
	MAC  string   `json:"mac,omitempty"`
	IPv4 []string `json:"ipv4,omitempty"`
	IPv6 []string `json:"ipv6,omitempty"`
	// Config is, for [SourceConfig], what netN says where it names no
	// address: "ip=dhcp", "ip6=auto", … (the address is not known here).
	Config string `json:"config,omitempty"`
}

// GuestAddresses reads guests' network interfaces: a VM's through its QEMU
// guest agent, a container's from its network namespace (PVE 8 and later;
// on PVE 7 from its config, marked [SourceConfig]). With a VMID it reads
// that guest, whatever its state; without one every running guest that
// matches the filters, by VMID, a page at a time, at most
// [MaxAddressReadsAtOnce] at once ([MaxAddressReadsPerNode] per node).
//
// A guest that cannot be read (stopped, no agent configured, agent not
// running, no privilege, node not on the allowlist or unreachable) is
// reported with the reason in [GuestAddresses.Unavailable]; the call fails
// only for invalid input, a node filter off the allowlist (nothing is
// sent), or when the guest list cannot be read. Guests on nodes off the
// allowlist are reported, never read.
func (c *Client) GuestAddresses(ctx context.Context, in GuestAddressesInput) (*GuestAddressesResult, error) {
	const op = OpGuestAddresses
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	if in.Node != "" {
		if err := c.policy.checkNode(in.Node); err != nil {
			return nil, c.logged(ctx, op, start, err, nodeAttr(in.Node))
		}
	}
	raw, err := c.vmResources(ctx)
	if err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	matched, notRunning := in.selectGuests(raw)
	if in.VMID != 0 && len(matched) == 0 {
		return nil, c.logged(ctx, op, start, fmt.Errorf("%w: guest %d is not in /cluster/resources with these filters (or the token lacks VM.Audit on it)", ErrNotFound, in.VMID))
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultAddressesLimit
	}
	first, _ := slices.BinarySearchFunc(matched, after+1, func(r *rawResource, id int64) int {
		return int(int64(r.VMID) - id)
	})
	page := matched[first:min(len(matched), first+limit)]
	res := &GuestAddressesResult{Total: len(matched), NotRunning: notRunning, Guests: make([]GuestAddresses, len(page))}
	c.readAddresses(ctx, page, in.Loopback, res.Guests)
	if err := ctx.Err(); err != nil {
		return nil, c.logged(ctx, op, start, err)
	}
	// The byte bound: the page ends at the guest that would pass it.
	size := 0
	for i := range res.Guests {
		b, _ := json.Marshal(&res.Guests[i])
		if size += len(b) + 1; size > MaxAddressesBytes && i > 0 {
			res.Guests = res.Guests[:i]
			break
		}
	}
	if n := len(res.Guests); first+n < len(matched) {
		res.NextCursor = encodeCursor(res.Guests[n-1].VMID)
	}
	c.logged(ctx, op, start, nil)
	return res, nil
}

// selectGuests returns the guests the input names, by VMID: the one with its
// VMID whatever its state, else the running non-template guests that pass
// the filters (and how many matched but were not running).
func (in GuestAddressesInput) selectGuests(raw []rawResource) (matched []*rawResource, notRunning int) {
	for i := range raw {
		r := &raw[i]
		if r.Type != "qemu" && r.Type != "lxc" {
			continue
		}
		switch {
		case in.VMID != 0 && int(r.VMID) != in.VMID,
			in.Node != "" && string(r.Node) != in.Node,
			in.Type != "" && r.Type != string(in.Type),
			in.Pool != "" && string(r.Pool) != in.Pool,
			in.Tag != "" && !slices.ContainsFunc(splitTags(string(r.Tags)), func(t string) bool { return strings.EqualFold(t, in.Tag) }):
			continue
		}
		if in.VMID == 0 && (string(r.Status) != "running" || bool(r.Template)) {
			notRunning++
			continue
		}
		matched = append(matched, r)
	}
	slices.SortFunc(matched, func(a, b *rawResource) int { return int(a.VMID - b.VMID) })
	return matched, notRunning
}

// readAddresses fills out[i] for page[i], reading at most
// MaxAddressReadsAtOnce guests at once and MaxAddressReadsPerNode per node.
func (c *Client) readAddresses(ctx context.Context, page []*rawResource, loopback bool, out []GuestAddresses) {
	all := make(chan struct{}, MaxAddressReadsAtOnce)
	perNode := map[string]chan struct{}{}
	var wg sync.WaitGroup
	// noEndpoint is set once a container's interfaces endpoint answered
	// 501 (a cluster before PVE 8): the other containers go to the
	// config at once.
	var noEndpoint atomic.Bool
	for i, r := range page {
		g := &out[i]
		*g = GuestAddresses{VMID: int(r.VMID), Name: line(string(r.Name), maxNameLen), Node: line(string(r.Node), 64),
			Type: GuestType(r.Type), Status: line(string(r.Status), 16), Interfaces: []GuestInterface{}}
		if err := c.policy.checkNode(string(r.Node)); err != nil {
			g.Unavailable, g.Detail = UnavailableNodeNotAllowed, line(refusalReason(err), maxErrorText)
			continue
		}
		if g.Status != "running" {
			g.Unavailable = UnavailableStopped
			continue
		}
		node, ok := perNode[g.Node]
		if !ok {
			node = make(chan struct{}, MaxAddressReadsPerNode)
			perNode[g.Node] = node
		}
		wg.Go(func() {
			select {
			case node <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-node }()
			select {
			case all <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-all }()
			t := Target{Node: g.Node, Type: g.Type, VMID: g.VMID}
			if t.Type == TypeQEMU {
				c.agentAddresses(ctx, t, loopback, g)
				return
			}
			if !noEndpoint.Load() && c.containerAddresses(ctx, t, loopback, g) {
				return
			}
			noEndpoint.Store(true)
			c.configAddresses(ctx, t, g)
		})
	}
	wg.Wait()
}

// rawAgentInterface is one entry of guest-network-get-interfaces.
type rawAgentInterface struct {
	Name        pve.String `json:"name"`
	MAC         pve.String `json:"hardware-address"`
	IPAddresses []struct {
		Address pve.String `json:"ip-address"`
		Type    pve.String `json:"ip-address-type"`
		Prefix  pve.Int    `json:"prefix"`
	} `json:"ip-addresses"`
}

func (c *Client) agentAddresses(ctx context.Context, t Target, loopback bool, g *GuestAddresses) {
	var raw struct {
		Result []rawAgentInterface `json:"result"`
	}
	if err := c.get(ctx, guestPath(t, "agent", "network-get-interfaces"), nil, &raw); err != nil {
		g.Unavailable, g.Detail = agentUnavailable(err)
		return
	}
	g.Source = SourceAgent
	for _, nic := range raw.Result {
		var addrs []string
		for _, a := range nic.IPAddresses {
			addrs = append(addrs, string(a.Address)+"/"+strconv.Itoa(int(a.Prefix)))
		}
		g.add(string(nic.Name), string(nic.MAC), addrs, loopback)
	}
}

// rawLXCInterface is one entry of lxc/{vmid}/interfaces: the legacy
// inet/inet6 hold only the last address of each family; ip-addresses
// (pve-container 5.2.6) holds them all.
type rawLXCInterface struct {
	Name        pve.String `json:"name"`
	HWAddr      pve.String `json:"hwaddr"`
	Inet        pve.String `json:"inet"`
	Inet6       pve.String `json:"inet6"`
	IPAddresses []struct {
		Address pve.String `json:"ip-address"`
		Prefix  pve.Int    `json:"prefix"`
	} `json:"ip-addresses"`
}

// containerAddresses reads a running container's interfaces; it returns
// false, having changed nothing, when the cluster has no such endpoint.
func (c *Client) containerAddresses(ctx context.Context, t Target, loopback bool, g *GuestAddresses) bool {
	var raw []rawLXCInterface
	err := c.get(ctx, guestPath(t, "interfaces"), nil, &raw)
	var ae *APIError
	if errors.As(err, &ae) && ae.StatusCode == http.StatusNotImplemented {
		return false
	}
	if err != nil {
		g.Unavailable, g.Detail = agentUnavailable(err)
		return true
	}
	if raw == nil {
		// {"data": null}: the container stopped since the list was read.
		g.Unavailable = UnavailableStopped
		return true
	}
	g.Source = SourceContainer
	for _, nic := range raw {
		var addrs []string
		for _, a := range nic.IPAddresses {
			addrs = append(addrs, string(a.Address)+"/"+strconv.Itoa(int(a.Prefix)))
		}
		if len(nic.IPAddresses) == 0 {
			for _, a := range []pve.String{nic.Inet, nic.Inet6} {
				if a != "" {
					addrs = append(addrs, string(a))
				}
			}
		}
		g.add(string(nic.Name), string(nic.HWAddr), addrs, loopback)
	}
	return true
}

// configAddresses reads what a container's netN configure: name, hwaddr,
// ip and ip6 (an address, or dhcp, auto, manual).
func (c *Client) configAddresses(ctx context.Context, t Target, g *GuestAddresses) {
	var raw map[string]json.RawMessage
	if err := c.get(ctx, guestPath(t, "config"), nil, &raw); err != nil {
		g.Unavailable, g.Detail = agentUnavailable(err)
		return
	}
	g.Source = SourceConfig
	keys := sortedKeys(raw)
	slices.SortFunc(keys, func(a, b string) int { return netIndex(a) - netIndex(b) })
	for _, k := range keys {
		if netIndex(k) < 0 {
			continue
		}
		var v pve.String
		if json.Unmarshal(raw[k], &v) != nil {
			continue
		}
		opts := map[string]string{}
		for _, part := range strings.Split(string(v), ",") {
			if key, val, ok := strings.Cut(part, "="); ok {
				opts[key] = val
			}
		}
		var addrs, notes []string
		for _, key := range []string{"ip", "ip6"} {
			switch val := opts[key]; {
			case val == "":
			case strings.Contains(val, "/"):
				addrs = append(addrs, val)
			default:
				if n, _ := capLine(key+"="+val, 32); n != "" {
					notes = append(notes, n)
				}
			}
		}
		if nic, ok := g.add(opts["name"], opts["hwaddr"], addrs, true); ok {
			nic.Config = strings.Join(notes, " ")
		}
	}
}

// netIndex is N of a "netN" config key, or -1.
func netIndex(k string) int {
	rest, ok := strings.CutPrefix(k, "net")
	if !ok || rest == "" || len(rest) > 2 {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// add appends an interface with its valid addresses (at most
// MaxInterfaceAddresses per family), leaving out, unless loopback is
// set, loopback addresses and an interface with nothing else. It returns
// the interface added.
func (g *GuestAddresses) add(name, mac string, addrs []string, loopback bool) (*GuestInterface, bool) {
	nic := GuestInterface{Name: line(name, 64), MAC: cleanMAC(mac)}
	isLoopback := nic.Name == "lo" && (nic.MAC == "" || nic.MAC == "00:00:00:00:00:00")
	kept := 0
	for _, a := range addrs {
		p, err := netip.ParsePrefix(withoutZone(a))
		if err != nil {
			continue // not an address: guest-reported text is not passed on
		}
		if p.Addr().IsLoopback() && !loopback {
			continue
		}
		kept++
		list := &nic.IPv6
		if p.Addr().Is4() {
			list = &nic.IPv4
		}
		if len(*list) == MaxInterfaceAddresses {
			g.Truncated = true
			continue
		}
		*list = append(*list, p.String())
	}
	if !loopback && (isLoopback || (kept == 0 && len(addrs) > 0 && nic.MAC == "")) {
		return nil, false
	}
	if len(g.Interfaces) == MaxGuestInterfaces {
		g.Truncated = true
		return nil, false
	}
	g.Interfaces = append(g.Interfaces, nic)
	return &g.Interfaces[len(g.Interfaces)-1], true
}

// withoutZone drops an IPv6 zone ("fe80::1%eth0/64"), which a Windows
// agent may report and a prefix cannot hold.
func withoutZone(a string) string {
	i := strings.IndexByte(a, '%')
	if i < 0 {
		return a
	}
	rest := ""
	if j := strings.IndexByte(a[i:], '/'); j >= 0 {
		rest = a[i+j:]
	}
	return a[:i] + rest
}

// cleanMAC returns a MAC address in lower case, or "" for anything that is
// not one (six hexadecimal pairs separated by colons).
func cleanMAC(s string) string {
	if len(s) != 17 {
		return ""
	}
	s = strings.ToLower(s)
	for i := range len(s) {
		ch := s[i]
		if i%3 == 2 {
			if ch != ':' {
				return ""
			}
		} else if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return ""
		}
	}
	return s
}

// agentUnavailable classifies why an agent or interface read failed, with
// Proxmox's message (qemu-server's assert_agent_available words them:
// qemu-server QemuServer/Agent.pm).
func agentUnavailable(err error) (string, string) {
	var ae *APIError
	if !errors.As(err, &ae) {
		return UnavailableError, line(err.Error(), maxErrorText)
	}
	msg := line(ae.Message, maxErrorText)
	switch {
	case ae.StatusCode == http.StatusForbidden:
		return UnavailableNoPermission, msg
	case ae.StatusCode >= 595:
		return UnavailableNodeUnreachable, msg
	case strings.Contains(msg, "No QEMU guest agent configured"):
		return UnavailableAgentNotConfigured, msg
	case strings.Contains(msg, "guest agent is not running"):
		return UnavailableAgentNotRunning, msg
	case strings.HasPrefix(msg, "VM ") && strings.HasSuffix(msg, " is not running"):
		return UnavailableStopped, msg
	case strings.Contains(msg, "qga command"):
		return UnavailableAgentError, msg
	}
	return UnavailableError, msg
}

// refusalReason is a refusal's reason without the sentinel.
func refusalReason(err error) string {
	var re *RefusalError
	if errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}
