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

// TargetLabel is TargetText with the guest's name as the operator was
// shown it, "pve1/qemu/101 (web1)", for the operator's own views (the
// approve command, the grant list, the approval page); the refusal a
// model reads keeps TargetText, without the name.
func (g Grant) TargetLabel() string {
	if g.Target.VMID != 0 && g.Guest.Name != "" {
		return g.TargetText() + " (" + g.Guest.Name + ")"
	}
	return g.TargetText()
}
