package proxmoxsafe

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The completion proof of the provision class: the task ended OK, the new
// guest is in /cluster/resources on its node, no longer locked (Proxmox
// holds "create" or "clone" while the task runs), in the requested pool,
// and its configuration reads back what the request set.

// provisionVerifier proves a clone or a create: the new guest exists,
// unlocked, with its configuration.
var provisionVerifier = &verifier{needs: "a new guest", receipt: (*Client).checkNewGuest,
	proof: func(_ *Client, r *Receipt, _ TaskRef) (proof, error) {
		return proof{what: r.Action + " of " + r.Target.guestString(),
			expected: "the new guest " + r.NewGuest.String() + " unlocked with the requested configuration",
			observe:  func(ctx context.Context, w *waiter) (bool, error) { return w.observeCreated(ctx) }}, nil
	}}

// checkNewGuest validates the receipt's new guest: required, and its node
// must be allowlisted like the target's.
func (c *Client) checkNewGuest(r *Receipt) error {
	ng := r.NewGuest
	if ng == nil {
		return &ValidationError{Fields: []FieldError{{Field: "new_guest", Problem: "is required to verify a clone or create"}}}
	}
	if err := c.check(receiptCheck{UPID: r.UPID, Node: ng.Node, Type: ng.Type, VMID: ng.VMID}); err != nil {
		return err
	}
	return c.policy.checkNode(ng.Node)
}

// observeCreated is one read of the new guest's existence and config.
func (w *waiter) observeCreated(ctx context.Context) (bool, error) {
	ng := w.r.NewGuest
	view, err := w.c.readClusterView(ctx)
	if err != nil {
		return false, err
	}
	g := view.guest(ng.VMID)
	switch {
	case g == nil:
		w.out.Observed = ng.String() + " not in the cluster resources"
		return false, nil
	case g.Type != string(ng.Type) || string(g.Node) != ng.Node:
		w.out.Observed = fmt.Sprintf("VMID %d is %s on %s, not %s", ng.VMID, g.Type, line(string(g.Node), MaxNodeLen), ng.String())
		return false, nil
	case string(g.Lock) != "":
		w.out.Observed = ng.String() + " exists, still locked (" + line(string(g.Lock), 32) + ")"
		return false, nil
	case string(g.Pool) != ng.Pool:
		w.out.Observed = fmt.Sprintf("%s exists, in pool %q instead of %q", ng.String(), line(string(g.Pool), MaxPoolIDLen), ng.Pool)
		return false, nil
	}
	var cfg map[string]any
	if err := w.c.get(ctx, guestPath(ng.Target(), "config"), nil, &cfg); err != nil {
		return false, err
	}
	for _, k := range sortedConfigKeys(ng.Config) {
		got, _ := configString(cfg[k])
		if !configMatches(k, ng.Config[k], got) {
			w.out.Observed = fmt.Sprintf("%s exists, but its configuration %s does not read back as requested", ng.String(), k)
			return false, nil
		}
	}
	if diff := restoredDiffers(ng, cfg); diff != "" {
		w.out.Observed = fmt.Sprintf("%s exists, but its configuration does not read back as the archive's: %s", ng.String(), diff)
		return false, nil
	}
	w.out.Observed = ng.String() + " exists, unlocked"
	if len(ng.Archive) > 0 {
		w.out.Observed += fmt.Sprintf(", its configuration as the archive's (%d keys; disk volumes, vmgenid and, with unique, MAC addresses differ by design)", len(ng.Archive))
	}
	if len(ng.Config) > 0 {
		w.out.Observed += ", configuration as requested (" + strings.Join(sortedConfigKeys(ng.Config), ", ") + ")"
	}
	return true, nil
}

func sortedConfigKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// configString renders a config value (a string, a number, 0/1) as text.
func configString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return boolParam(x), true
	}
	return "", false
}

// configMatches reports whether the configuration value got reads back
// what was sent as want. A new disk is sent as "storage:sizeGiB" and reads
// back as "storage:volume,…,size=<n>G"; a property string (a network
// device, a CD-ROM) reads back with every property sent among its own
// (Proxmox adds a MAC address, a type, …; a bare NIC model reads back as
// "model=MAC"). Everything else must be equal.
func configMatches(key, want, got string) bool {
	if (key == "rootfs" || diskKeyRe.MatchString(key)) && !strings.Contains(want, "media=cdrom") {
		storage, size, ok := strings.Cut(want, ":")
		if !ok {
			return want == got
		}
		vol, _, _ := strings.Cut(got, ",")
		gs, _, _ := strings.Cut(vol, ":")
		return gs == storage && slices.Contains(strings.Split(got, ","), "size="+size+"G")
	}
	if !strings.ContainsAny(want, ",=") {
		return want == got
	}
	have := strings.Split(got, ",")
	for _, part := range strings.Split(want, ",") {
		if slices.Contains(have, part) {
			continue
		}
		if !strings.Contains(part, "=") && slices.ContainsFunc(have, func(h string) bool { return strings.HasPrefix(h, part+"=") }) {
			continue
		}
		return false
	}
	return true
}
