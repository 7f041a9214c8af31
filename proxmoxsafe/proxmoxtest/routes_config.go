package proxmoxtest

// maskedPassword is how qemu-server answers a set cipassword in GET
// config/pending (qs API2/Qemu.pm, since 2018): never the value itself.
const maskedPassword = "**********"

// handleGuestConfig is GET .../config: the keys derived from the model
// (handleConfig), the snapshot the current state is based on as "parent",
// then the guest's extra Config keys and, for containers, the raw lxc.*
// lines as "lxc": [[key, value], ...]. A cipassword is masked like PVE does.
func handleGuestConfig(typ string) func(rc *reqCtx) (any, *apiError) {
	derived := handleConfig(typ)
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		data, aerr := derived(rc)
		if aerr != nil {
			return nil, aerr
		}
		e := data.(map[string]any)
		delete(e, "parent")
		if p := currentSnapshot(g); p != "" {
			e["parent"] = p
		}
		for k, v := range g.Config {
			e[k] = v
		}
		if _, ok := e["cipassword"]; ok {
			e["cipassword"] = maskedPassword
		}
		if typ == "lxc" && len(g.LXCRaw) > 0 {
			pairs := make([][]string, len(g.LXCRaw))
			for i, kv := range g.LXCRaw {
				pairs[i] = []string{kv[0], kv[1]}
			}
			e["lxc"] = pairs
		}
		return e, nil
	}
}

// currentSnapshot is the snapshot the guest's current state is based on:
// CurrentSnapshot when set, else the newest snapshot, else "".
func currentSnapshot(g *Guest) string {
	if g.CurrentSnapshot != "" {
		return g.CurrentSnapshot
	}
	if n := len(g.Snapshots); n > 0 {
		return g.Snapshots[n-1].Name
	}
	return ""
}
