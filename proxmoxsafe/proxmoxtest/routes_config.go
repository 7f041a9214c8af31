package proxmoxtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// maskedPassword is how qemu-server answers a set cipassword in GET
// config/pending (qs API2/Qemu.pm, since 2018): never the value itself.
const maskedPassword = "**********"

// currentConfig is the guest's config as written in its config file,
// without the pending section: the keys derived from the model
// (derivedConfig), the snapshot the current state is based on as
// "parent", then the guest's extra Config keys (which override derived
// ones). The raw lxc.* lines and the digest are not in it.
func currentConfig(g *Guest) map[string]any {
	e := derivedConfig(g, g.Type)
	delete(e, "parent")
	if p := currentSnapshot(g); p != "" {
		e["parent"] = p
	}
	for k, v := range g.Config {
		e[k] = v
	}
	return e
}

// configDigest is the config's "digest": like Proxmox's SHA-1 of the
// config file, it changes whenever the config or its pending section does.
func configDigest(g *Guest, current map[string]any) string {
	h := sha1.New()
	keys := make([]string, 0, len(current))
	for k := range current {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s: %v\n", k, current[k])
	}
	for _, kv := range g.LXCRaw {
		fmt.Fprintf(h, "%s: %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(h, "\n[pending]\n")
	pk := make([]string, 0, len(g.Pending))
	for k := range g.Pending {
		pk = append(pk, k)
	}
	sort.Strings(pk)
	for _, k := range pk {
		fmt.Fprintf(h, "%s: %s\n", k, g.Pending[k])
	}
	fmt.Fprintf(h, "delete: %s\n", strings.Join(g.PendingDelete, ","))
	return hex.EncodeToString(h.Sum(nil))
}

// handleGuestConfig is GET .../config: currentConfig with the digest and,
// unless current=1, the pending values applied over it (pending deletions
// removed), as qemu-server/pve-container's vmconfig do. For containers
// the raw lxc.* lines are answered as "lxc": [[key, value], ...]. A
// cipassword is masked like PVE does.
func handleGuestConfig(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		e := currentConfig(g)
		digest := configDigest(g, e)
		if !rc.flag("current") {
			for k, v := range g.Pending {
				e[k] = v
			}
			for _, k := range g.PendingDelete {
				delete(e, k)
			}
		}
		e["digest"] = digest
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

// handleGuestPending is GET .../pending: PVE::GuestHelpers'
// config_with_pending_array. One entry per current key (its value, the
// pending value if any, delete: 1 if its deletion is pending, the digest
// included), then keys only in the pending section, then pending
// deletions of keys that are not set. A cipassword is masked.
func handleGuestPending(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		cur := currentConfig(g)
		cur["digest"] = configDigest(g, cur)
		mask := func(k string, v any) any {
			if k == "cipassword" {
				return maskedPassword
			}
			return v
		}
		out := []map[string]any{}
		keys := make([]string, 0, len(cur))
		for k := range cur {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			item := map[string]any{"key": k, "value": mask(k, cur[k])}
			if v, ok := g.Pending[k]; ok {
				item["pending"] = mask(k, v)
			}
			if slices.Contains(g.PendingDelete, k) {
				item["delete"] = 1
			}
			out = append(out, item)
		}
		pk := make([]string, 0, len(g.Pending))
		for k := range g.Pending {
			if _, ok := cur[k]; !ok {
				pk = append(pk, k)
			}
		}
		sort.Strings(pk)
		for _, k := range pk {
			out = append(out, map[string]any{"key": k, "pending": mask(k, g.Pending[k])})
		}
		for _, k := range g.PendingDelete {
			if _, ok := cur[k]; !ok {
				if _, ok := g.Pending[k]; !ok {
					out = append(out, map[string]any{"key": k, "delete": 1})
				}
			}
		}
		return out, nil
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
