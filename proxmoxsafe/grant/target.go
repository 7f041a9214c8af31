package grant

// TargetText is the grant's target as a person reads it: the guest
// (node/type/vmid[/snapshot]) when the grant names one; for a request that
// names no guest (a gateway write to /cluster/ha/groups, /pools/…), its
// path, beside the action that is its method, as the approval page names
// it; "(none)" when it names neither. Its zero guest target alone reads
// "//0", which names nothing.
func (g Grant) TargetText() string {
	switch {
	case g.Target.VMID != 0:
		return g.Target.String()
	case g.Plan != nil && g.Plan.Path != "":
		return g.Plan.Path
	}
	return "(none)"
}
