package proxmoxsafe

import (
	"context"
)

// Completion proof of a migration: the task ended OK and
// /cluster/resources, the cluster-wide view, shows the guest on the
// target node. status/current cannot prove it: it is read from one node,
// and after the move the source no longer has the guest.

// migrateTargetCheck validates a receipt's target node before a wait.
type migrateTargetCheck struct {
	TargetNode string `json:"target_node" validate:"required,pve_node"`
}

// migrateVerifier proves a migration: /cluster/resources shows the
// guest on the receipt's target node.
var migrateVerifier = &verifier{needs: "a target node", proof: func(c *Client, r *Receipt, _ TaskRef) (proof, error) {
	if err := c.check(migrateTargetCheck{TargetNode: r.TargetNode}); err != nil {
		return proof{}, err
	}
	node := r.TargetNode
	return proof{what: r.Action + " of " + r.Target.guestString(), expected: "the guest on node " + node,
		observe: func(ctx context.Context, w *waiter) (bool, error) { return w.observeNode(ctx, node) }}, nil
}}

// observeNode reads where the guest is and reports whether that is the
// target node.
func (w *waiter) observeNode(ctx context.Context, target string) (bool, error) {
	raw, err := w.c.vmResources(ctx)
	if err != nil {
		return false, err
	}
	t := w.r.Target
	for _, r := range raw {
		if int(r.VMID) != t.VMID || r.Type != string(t.Type) {
			continue
		}
		node := line(string(r.Node), MaxNodeLen)
		w.out.Observed = "on node " + node + " (" + line(string(r.Status), 16) + ")"
		return node == target, nil
	}
	w.out.Observed = "not in the cluster resource list"
	return false, nil
}
