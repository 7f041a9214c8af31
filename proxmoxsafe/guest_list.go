package proxmoxsafe

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

// OpListGuests is the name of [Client.ListGuests].
const OpListGuests Operation = "ListGuests"

// listGuestsOp declares [Client.ListGuests].
var listGuestsOp = operation{info: OperationInfo{
	Name:   OpListGuests,
	Method: "GET",
	Route:  "/cluster/resources",
	Privileges: []Privilege{
		{Path: pathVMs, Name: "VM.Audit",
			Note: "guests the token lacks it on are silently left out"},
	},
}}

// ListGuestsInput filters and pages [Client.ListGuests]. The zero value lists
// the first [DefaultListLimit] guests of the whole cluster.
type ListGuestsInput struct {
	// Node keeps only guests on this node.
	Node string `json:"node,omitempty" validate:"omitempty,pve_node"`
	// Type keeps only "qemu" or only "lxc" guests.
	Type GuestType `json:"type,omitempty" validate:"omitempty,oneof=qemu lxc"`
	// Status keeps only guests in this state ("running", "stopped", "unknown").
	Status string `json:"status,omitempty" validate:"omitempty,oneof=running stopped unknown"`
	// Tag keeps only guests carrying this tag (exact, case-insensitive).
	Tag string `json:"tag,omitempty" validate:"omitempty,pve_tag"`
	// Name keeps only guests whose name contains this text (case-insensitive).
	Name string `json:"name,omitempty" validate:"omitempty,max=128,printascii" jsonschema:"Substring, any case."`
	// Limit caps the page size; 0 means [DefaultListLimit]; at most [MaxListLimit].
	Limit int `json:"limit,omitempty" validate:"min=0,max=1000" jsonschema:"Default 200."`
	// Cursor continues a listing from [ListGuestsResult.NextCursor].
	Cursor string `json:"cursor,omitempty" validate:"omitempty,max=64,printascii" jsonschema:"The previous page's next_cursor."`
}

// Default and maximum page sizes of [Client.ListGuests].
const (
	DefaultListLimit = 200
	MaxListLimit     = 1000
)

// ListGuestsResult is one page of guests, ordered by VMID.
type ListGuestsResult struct {
	Guests []Guest `json:"guests"`
	// Total counts every guest that matched the filters, on all pages.
	Total int `json:"total"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Guest is one QEMU VM or LXC container as /cluster/resources reports it.
// Sizes are bytes, times seconds; strings are sanitized.
type Guest struct {
	VMID     int       `json:"vmid"`
	Name     string    `json:"name"`
	Node     string    `json:"node"`
	Type     GuestType `json:"type"`
	Status   string    `json:"status"`
	Template bool      `json:"template"`
	Lock     string    `json:"lock,omitempty"`
	Tags     []string  `json:"tags"`
	// HAState is the HA manager's state for the guest, empty when unmanaged.
	HAState string  `json:"hastate,omitempty"`
	CPU     float64 `json:"cpu"`
	MaxCPU  int     `json:"maxcpu"`
	Mem     uint64  `json:"mem"`
	MaxMem  uint64  `json:"maxmem"`
	Disk    uint64  `json:"disk"`
	MaxDisk uint64  `json:"maxdisk"`
	Uptime  int64   `json:"uptime"`
	// Manageable reports whether the current policy would let a mutation
	// target this guest (node allowlisted, guest not protected, some
	// mutation class enabled). It says nothing about the guest's state.
	Manageable bool `json:"manageable"`
	// Protected is true when the operator protects the guest (by VMID,
	// name, tag or pool): no mutation may touch it.
	Protected bool `json:"protected"`
}

// Caps on guest fields: names are DNS names in Proxmox, but the API does not
// promise it for every version, so we cap defensively.
const (
	maxNameLen = 128
	maxTags    = 32
	maxTagLen  = MaxTagLen
)

type rawResource struct {
	Type     string     `json:"type"`
	VMID     pve.Int    `json:"vmid"`
	Name     pve.String `json:"name"`
	Node     pve.String `json:"node"`
	Status   pve.String `json:"status"`
	Template pve.Bool   `json:"template"`
	Lock     pve.String `json:"lock"`
	Tags     pve.String `json:"tags"`
	HAState  pve.String `json:"hastate"`
	CPU      pve.Float  `json:"cpu"`
	MaxCPU   pve.Int    `json:"maxcpu"`
	Mem      pve.Int    `json:"mem"`
	MaxMem   pve.Int    `json:"maxmem"`
	Disk     pve.Int    `json:"disk"`
	MaxDisk  pve.Int    `json:"maxdisk"`
	Uptime   pve.Int    `json:"uptime"`
	Pool     pve.String `json:"pool"`
}

// ListGuests lists QEMU VMs and LXC containers of the whole cluster from
// /cluster/resources, ordered by VMID, one page at a time.
//
// It is cluster-wide: the node allowlist does not filter it (Proxmox itself
// filters by the token's VM.Audit privilege). Each guest's Manageable field
// says whether the policy would let a mutation target it.
func (c *Client) ListGuests(ctx context.Context, in ListGuestsInput) (*ListGuestsResult, error) {
	start := time.Now()
	if err := c.check(in); err != nil {
		return nil, c.logged(ctx, "ListGuests", start, err)
	}
	after, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, c.logged(ctx, "ListGuests", start, err)
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	raw, err := c.vmResources(ctx)
	if err != nil {
		return nil, c.logged(ctx, "ListGuests", start, err)
	}
	matched := make([]*rawResource, 0, len(raw))
	for i := range raw {
		r := &raw[i]
		if (r.Type == "qemu" || r.Type == "lxc") && in.matches(r) {
			matched = append(matched, r)
		}
	}
	slices.SortFunc(matched, func(a, b *rawResource) int { return int(a.VMID - b.VMID) })
	res := &ListGuestsResult{Total: len(matched), Guests: make([]Guest, 0, min(limit, len(matched)))}
	first, _ := slices.BinarySearchFunc(matched, after+1, func(r *rawResource, id int64) int {
		return int(int64(r.VMID) - id)
	})
	for _, r := range matched[first:] {
		if len(res.Guests) == limit {
			res.NextCursor = encodeCursor(res.Guests[len(res.Guests)-1].VMID)
			break
		}
		res.Guests = append(res.Guests, c.guestFrom(r))
	}
	c.logged(ctx, "ListGuests", start, nil)
	return res, nil
}

func (in ListGuestsInput) matches(r *rawResource) bool {
	if in.Node != "" && string(r.Node) != in.Node {
		return false
	}
	if in.Type != "" && r.Type != string(in.Type) {
		return false
	}
	if in.Status != "" && string(r.Status) != in.Status {
		return false
	}
	if in.Name != "" && !containsFold(string(r.Name), in.Name) {
		return false
	}
	if in.Tag != "" && !slices.ContainsFunc(splitTags(string(r.Tags)), func(t string) bool { return strings.EqualFold(t, in.Tag) }) {
		return false
	}
	return true
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// splitTags splits Proxmox's tag list; it uses ';' but older versions and
// hand-edited configs also use ',' or spaces.
func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
}

func (c *Client) guestFrom(r *rawResource) Guest {
	g := Guest{
		VMID:     int(r.VMID),
		Name:     line(string(r.Name), maxNameLen),
		Node:     line(string(r.Node), 64),
		Type:     GuestType(r.Type),
		Status:   line(string(r.Status), 16),
		Template: bool(r.Template),
		Lock:     line(string(r.Lock), 32),
		HAState:  line(string(r.HAState), 32),
		CPU:      float64(r.CPU),
		MaxCPU:   int(r.MaxCPU),
		Mem:      nonNegative(r.Mem),
		MaxMem:   nonNegative(r.MaxMem),
		Disk:     nonNegative(r.Disk),
		MaxDisk:  nonNegative(r.MaxDisk),
		Uptime:   int64(r.Uptime),
		Tags:     []string{},
	}
	for _, t := range splitTags(string(r.Tags)) {
		if len(g.Tags) == maxTags {
			break
		}
		g.Tags = append(g.Tags, line(t, maxTagLen))
	}
	g.Protected = c.policy.protected[g.VMID] || c.policy.protect.protectedBy(string(r.Name), splitTags(string(r.Tags)), string(r.Pool)) != ""
	g.Manageable = c.policy.manageable(g.Node, g.VMID) && !g.Protected
	return g
}

// Cursors are opaque to callers; inside they are "v1:<last vmid>". Paging by
// VMID (not by offset) keeps pages stable while guests come and go.
const cursorPrefix = "v1:"

func encodeCursor(lastVMID int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(lastVMID)))
}

func decodeCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	bad := &ValidationError{Fields: []FieldError{{Field: "cursor", Problem: "is not a cursor returned by a previous call"}}}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, bad
	}
	rest, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, bad
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < minVMID || n > maxVMID {
		return 0, bad
	}
	return n, nil
}

// GuestsCursorAfter returns the [ListGuestsInput.Cursor] that continues a
// listing after the guest vmid, as [ListGuestsResult.NextCursor] does: for
// a caller that cuts a page itself (a listing across several clusters).
func GuestsCursorAfter(vmid int) string { return encodeCursor(vmid) }
