package proxmoxsafe

import (
	"context"
	"encoding/base64"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/pve"
)

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
	var raw []rawResource
	if err := c.get(ctx, "/cluster/resources", url.Values{"type": {"vm"}}, &raw); err != nil {
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
	g.Protected = c.policy.protected[g.VMID] || c.policy.guards.protectedBy(string(r.Name), splitTags(string(r.Tags)), string(r.Pool)) != ""
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
