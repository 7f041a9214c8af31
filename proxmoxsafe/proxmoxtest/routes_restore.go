package proxmoxtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Restore: POST /nodes/{node}/qemu with archive, POST /nodes/{node}/lxc
// with ostemplate=<backup> and restore=1 (qemu-server and pve-container
// create_vm). Before the worker forks: VM.Allocate on the new VMID (the
// fake never models force, which the library never sends), access to the
// archive (Datastore.AllocateSpace on its storage and VM.Backup on the
// guest it is of), the VMID unused, the target storage usable. The new
// guest exists from the request on, locked "create", with the backed-up
// configuration; unique=1 gives its network devices new MAC addresses,
// storage moves its disks. The qmrestore or vzrestore task writes the
// recorded log shape (pve6 tasks-log-qmrestore-ok.json,
// tasks-log-vzrestore-ok.json) and unlocks it; a failure removes it.

// isRestore reports whether a create request is a restore.
func isRestore(rc *reqCtx, typ string) bool {
	if typ == "qemu" {
		_, ok := rc.params["archive"]
		return ok
	}
	return rc.params["restore"] == "1"
}

func handleRestore(rc *reqCtx, typ string) (any, *apiError) {
	s, c := rc.s, rc.s.cluster
	node, vmid := rc.params["node"], rc.vmid()
	archive := rc.params["archive"]
	if typ == "lxc" {
		archive = rc.params["ostemplate"]
	}
	if !hasPriv(rc.token, "/vms/"+strconv.Itoa(vmid), "VM.Allocate") {
		return nil, permErr("/vms/"+strconv.Itoa(vmid), "VM.Allocate")
	}
	if strings.HasPrefix(archive, "/") {
		return nil, errf("Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 562.")
	}
	sid, name, ok := strings.Cut(archive, ":")
	st := c.storage(sid)
	if !ok || st == nil {
		return nil, errf("storage '%s' does not exist", sid)
	}
	var b *Backup
	for _, cand := range st.Backups {
		if volidOf(st, cand) == archive && (st.Shared || cand.Node == "" || cand.Node == node) {
			b = cand
		}
	}
	owner := 0
	if b != nil {
		owner = b.VMID
	} else if f := strings.Split(strings.TrimPrefix(name, "backup/"), "-"); len(f) > 2 {
		owner, _ = strconv.Atoi(f[2])
	}
	if !hasPriv(rc.token, "/storage/"+sid, "Datastore.Allocate") {
		if !hasPriv(rc.token, "/storage/"+sid, "Datastore.AllocateSpace") {
			return nil, permErr("/storage/"+sid, "Datastore.AllocateSpace")
		}
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(owner), "VM.Backup") {
			return nil, permErr("/vms/"+strconv.Itoa(owner), "VM.Backup")
		}
	}
	if g := c.guest(vmid); g != nil {
		kind := map[string]string{"qemu": "VM", "lxc": "CT"}[typ]
		return nil, errf("unable to restore %s %d - %s", kind, vmid, inUse(g))
	}
	storage := rc.params["storage"]
	if storage != "" {
		if aerr := storageUsable(rc, storage, node, typ); aerr != nil {
			return nil, aerr
		}
	}
	g := &Guest{VMID: vmid, Node: node, Type: typ, Status: "stopped", Lock: "create", CPUs: 1, MaxMem: 512 << 20, Name: "restored-" + strconv.Itoa(vmid),
		Config: map[string]string{}}
	var archived map[string]string
	var src *Guest
	if b != nil {
		archived, src = archivedConfig(c, b)
	}
	if src != nil {
		cl := src.clone()
		g.Name, g.CPUs, g.MaxMem, g.MaxDisk, g.Description, g.Tags = cl.Name, cl.CPUs, cl.MaxMem, cl.MaxDisk, cl.Description, cl.Tags
		g.AgentEnabled = cl.AgentEnabled
	}
	// The archive's configuration, as qemu-server's
	// restore_update_config_line and pve-container's
	// sanitize_and_merge_config write it: lock, parent, unused disks and
	// the template flag dropped, a new vmgenid, new MAC addresses and
	// smbios1 uuid with unique=1, each disk on a new volume of the new
	// guest (on storage when given). Keys the model derives the same way
	// stay derived, so their JSON types stay Proxmox's.
	derived := derivedConfig(g, typ)
	unique := rc.params["unique"] == "1"
	for k, v := range archived {
		switch {
		case k == "parent" || k == "vmgenid" || k == "template" || k == "description" || strings.HasPrefix(k, "unused"):
			continue
		case strings.HasPrefix(k, "net") && unique:
			v = newMAC(typ, v, vmid)
		case k == "smbios1" && unique:
			v = fmt.Sprintf("uuid=00000000-0000-4000-8000-%012d", vmid)
		case (k == "rootfs" || diskParamRE.MatchString(k)) && !strings.Contains(v, "media=cdrom"):
			vol, rest, _ := strings.Cut(v, ",")
			store, disk, ok := strings.Cut(vol, ":")
			if !ok {
				store, disk = "local-lvm", vol
			}
			if storage != "" {
				store = storage
			}
			if src != nil {
				disk = strings.Replace(disk, "-"+strconv.Itoa(src.VMID)+"-", "-"+strconv.Itoa(vmid)+"-", 1)
			}
			v = store + ":" + disk
			if rest != "" {
				v += "," + rest
			}
		}
		if d, ok := derived[k]; ok && fmt.Sprint(d) == v {
			continue
		}
		g.Config[k] = v
	}
	c.Guests = append(c.Guests, g)
	ttype, logLines := "qmrestore", []string{
		fmt.Sprintf("restore vma archive: zstd -q -d -c /var/lib/vz/dump/%s | vma extract -v -r /var/tmp/vzdumptmp%d.fifo - /var/tmp/vzdumptmp%d", strings.TrimPrefix(name, "backup/"), vmid, vmid),
		"CFG: size: 97 name: qemu-server.conf",
		"rescan volumes...",
	}
	if typ == "lxc" {
		ttype, logLines = "vzrestore", []string{
			fmt.Sprintf("extracting archive '/var/lib/vz/dump/%s'", strings.TrimPrefix(name, "backup/")),
			"Total bytes read: 8970240 (8.6MiB, 141MiB/s)",
			"Detected container architecture: amd64",
		}
	}
	missing := b == nil
	t := s.startTask(node, ttype, vmid, rc.user(), -1, nil, func(c *Cluster, log *[]string) string {
		if missing {
			return fmt.Sprintf("unable to restore %s %d - can't find archive file '/var/lib/vz/dump/%s'", map[string]string{"qemu": "VM", "lxc": "CT"}[typ], vmid, strings.TrimPrefix(name, "backup/"))
		}
		*log = append(*log, logLines...)
		if g := c.guest(vmid); g != nil {
			g.Lock = ""
		}
		return ""
	})
	t.onError = func(c *Cluster) { c.removeGuest(vmid) }
	return t.UPID, nil
}

// newMAC replaces a network device's MAC address with a new one, as
// unique=1 does.
func newMAC(typ, v string, vmid int) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		switch {
		case typ == "lxc" && k == "hwaddr":
			parts[i] = "hwaddr=" + macFor(vmid)
		case typ == "qemu" && ok && i == 0:
			parts[i] = k + "=" + macFor(vmid)
		}
	}
	return strings.Join(parts, ",")
}

// volidOf is the volume id of a backup on st, the format defaulted as the
// content listing does.
// On a Proxmox Backup Server storage it is the snapshot's name,
// "<storage>:backup/<vm|ct>/<vmid>/<RFC 3339 time>" (pve-storage
// PBSPlugin.pm).
func volidOf(st *Storage, b *Backup) string {
	if st.Type == "pbs" {
		kind := map[string]string{"lxc": "ct"}[b.Type]
		if kind == "" {
			kind = "vm"
		}
		return fmt.Sprintf("%s:backup/%s/%d/%s", st.ID, kind, b.VMID, time.Unix(b.CTime, 0).UTC().Format("2006-01-02T15:04:05Z"))
	}
	return backupVolid(st.ID, b, backupFormat(st, b))
}

// backupFormat is the backup's format: pbs-vm or pbs-ct on a Proxmox
// Backup Server, else its own, else vzdump's default for the guest type.
func backupFormat(st *Storage, b *Backup) string {
	if st.Type == "pbs" {
		return map[string]string{"qemu": "pbs-vm", "lxc": "pbs-ct"}[b.Type]
	}
	if b.Format != "" {
		return b.Format
	}
	if b.Type == "lxc" {
		return "tar.zst"
	}
	return "vma.zst"
}
