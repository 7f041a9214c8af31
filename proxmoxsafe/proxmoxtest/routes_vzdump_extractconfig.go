package proxmoxtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// GET /nodes/{node}/vzdump/extractconfig (mgr API2/VZDump.pm
// extractconfig): the guest configuration inside a backup archive, as
// the text of its config file. Read access as for any backup volume
// (Datastore.Allocate on the storage, or Datastore.AllocateSpace there
// and VM.Backup on the guest it is of). A vzdump archive's QEMU config
// carries the disk map as "#qmdump#map:" comment lines; the description
// is comment lines; snapshots and pending changes are not in it.

func handleExtractConfig(rc *reqCtx) (any, *apiError) {
	c, node, volid := rc.s.cluster, rc.params["node"], rc.params["volume"]
	sid, _, ok := strings.Cut(volid, ":")
	st := c.storage(sid)
	if !ok || st == nil {
		return nil, errf("storage '%s' does not exist", sid)
	}
	var b *Backup
	for _, cand := range st.Backups {
		if volidOf(st, cand) == volid && (st.Shared || cand.Node == "" || cand.Node == node) {
			b = cand
		}
	}
	if b == nil {
		return nil, errf("volume '%s' does not exist", volid)
	}
	if !hasPriv(rc.token, "/storage/"+sid, "Datastore.Allocate") {
		if !hasPriv(rc.token, "/storage/"+sid, "Datastore.AllocateSpace") {
			return nil, permErr("/storage/"+sid, "Datastore.AllocateSpace")
		}
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(b.VMID), "VM.Backup") {
			return nil, permErr("/vms/"+strconv.Itoa(b.VMID), "VM.Backup")
		}
	}
	cfg, src := archivedConfig(c, b)
	if cfg == nil {
		return nil, errf("unable to extract configuration of '%s'", volid)
	}
	var out strings.Builder
	if src.Description != "" {
		for l := range strings.SplitSeq(src.Description, "\n") {
			out.WriteString("#" + l + "\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if k == "description" {
			continue
		}
		fmt.Fprintf(&out, "%s: %s\n", k, cfg[k])
	}
	if b.Type == "qemu" {
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			if diskParamRE.MatchString(k) && !strings.Contains(cfg[k], "media=cdrom") {
				vol, _, _ := strings.Cut(cfg[k], ",")
				store, _, _ := strings.Cut(vol, ":")
				fmt.Fprintf(&out, "#qmdump#map:%s:drive-%s:%s:raw:\n", k, k, store)
			}
		}
	}
	return out.String(), nil
}

// archivedConfig is the configuration a backup holds: the guest's as it
// was backed up (its config file, without the pending section), or, for
// a backup the cluster was made with, the guest's as it is now; nil when
// neither is known. It returns the guest too.
func archivedConfig(c *Cluster, b *Backup) (map[string]string, *Guest) {
	src := b.source
	if src == nil {
		src = c.guest(b.VMID)
	}
	if src == nil {
		return nil, nil
	}
	out := map[string]string{}
	for k, v := range currentConfig(src) {
		if k == "lock" || k == "digest" {
			continue
		}
		out[k] = fmt.Sprint(v)
	}
	return out, src
}
