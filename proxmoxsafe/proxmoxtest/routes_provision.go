package proxmoxtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// The provision endpoints: GET /cluster/nextid, POST /nodes/{node}/qemu
// and /nodes/{node}/lxc (create), POST …/{vmid}/clone. Like the real ones
// (mgr API2/Cluster.pm nextid; qemu-server API2/Qemu.pm create_vm and
// clone_vm; pve-container API2/LXC.pm create_vm and clone_vm) the checks
// that run before the worker forks answer synchronously (500, 400, 403);
// the new guest exists from the request on, locked "create" (a VM clone:
// "clone"), and is unlocked with its configuration when the qmcreate,
// vzcreate, qmclone or vzclone task ends OK, or removed when it fails.

func provisionRoutes() []*route {
	newid := pVMID()
	newid.name = "newid"
	target := param{name: "target", typ: tString, format: "pve-node", optional: true}
	storage := param{name: "storage", typ: tString, format: "pve-storage-id", optional: true}
	snap := param{name: "snapname", typ: tString, format: "pve-configid", maxLen: 40, optional: true}
	min0 := i64(0)
	vmClone := &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Clone"}}
	qemuClone := guestParams(newid, target, storage, snap, pStr("description"), pStr("pool"), pBool("full"),
		pEnum("format", "raw", "qcow2", "vmdk"), pInt("bwlimit", min0),
		param{name: "name", typ: tString, format: "dns-name", optional: true})
	lxcClone := guestParams(newid, target, storage, snap, pStr("description"), pStr("pool"), pBool("full"),
		param{name: "bwlimit", typ: tNumber, min: min0, optional: true},
		param{name: "hostname", typ: tString, format: "dns-name", optional: true})
	return []*route{
		{method: "GET", path: "/cluster/nextid", params: []param{{name: "vmid", typ: tInteger, format: "pve-vmid", min: i64(100), max: i64(999999999), optional: true}},
			handle: handleNextID},
		{method: "POST", path: "/nodes/{node}/qemu", params: qemuCreateParams(), proxy: true, handle: handleCreate("qemu")},
		{method: "POST", path: "/nodes/{node}/lxc", params: lxcCreateParams(), proxy: true, handle: handleCreate("lxc")},
		{method: "POST", path: "/nodes/{node}/qemu/{vmid}/clone", params: qemuClone, perm: vmClone, proxy: true, handle: handleClone("qemu")},
		{method: "POST", path: "/nodes/{node}/lxc/{vmid}/clone", params: lxcClone, perm: vmClone, proxy: true, handle: handleClone("lxc")},
	}
}

// handleNextID is GET /cluster/nextid: the lowest free VMID from 100, as
// a string (real servers answer {"data":"101"} although the schema says
// integer); with vmid, that VMID if it is free, else 400 "VM <id> already
// exists" (mgr API2/Cluster.pm; rec6 errors/400-param-vm-exists.json).
func handleNextID(rc *reqCtx) (any, *apiError) {
	c := rc.s.cluster
	if v, ok := rc.params["vmid"]; ok {
		id, _ := strconv.Atoi(v)
		if c.guest(id) != nil {
			return nil, paramErr(map[string]string{"vmid": fmt.Sprintf("VM %d already exists", id)})
		}
		return strconv.Itoa(id), nil
	}
	for id := 100; ; id++ {
		if c.guest(id) == nil {
			return strconv.Itoa(id), nil
		}
	}
}

// inUse is check_vmid_unused's error: the existing guest's kind and node.
func inUse(g *Guest) string {
	kind := "VM"
	if g.Type == "lxc" {
		kind = "CT"
	}
	return fmt.Sprintf("%s %d already exists on node '%s'", kind, g.VMID, g.Node)
}

// newDiskRE is the "STORAGE:SIZE" syntax that allocates a new volume.
var newDiskRE = lazyre.New(`^([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):(\d+(?:\.\d+)?)(,.*)?$`)

// contentFor names what a new disk needs: VM images or container roots,
// with the storage error Proxmox gives when the storage lacks it.
var contentFor = map[string][2]string{
	"qemu": {"images", "vm images"},
	"lxc":  {"rootdir", "container directories"},
}

// storageUsable is storage_check_enabled plus the content check of
// check_storage_access (qemu) / the rootfs allocation (lxc) and the
// Datastore.AllocateSpace check.
func storageUsable(rc *reqCtx, id, node, typ string) *apiError {
	c := rc.s.cluster
	st := c.storage(id)
	switch {
	case st == nil:
		return errf("storage '%s' does not exist", id)
	case !st.onNode(node):
		return errf("storage '%s' is not available on node '%s'", id, node)
	case st.Disabled:
		return errf("storage '%s' is disabled", id)
	case !hasPriv(rc.token, "/storage/"+id, "Datastore.AllocateSpace"):
		return permErr("/storage/"+id, "Datastore.AllocateSpace")
	case !st.hasContent(contentFor[typ][0]):
		return errf("storage '%s' does not support %s", id, contentFor[typ][1])
	}
	return nil
}

// volumeExists checks an ISO or template volume id (storage:name).
func volumeExists(rc *reqCtx, volid, node string) *apiError {
	id, name, _ := strings.Cut(volid, ":")
	st := rc.s.cluster.storage(id)
	if st == nil {
		return errf("storage '%s' does not exist", id)
	}
	if !st.onNode(node) || !slices.Contains(st.Volumes, name) {
		return errf("volume '%s' does not exist", volid)
	}
	return nil
}

// volumeEntries lists a storage's Volumes for the content listing.
func volumeEntries(rc *reqCtx, st *Storage, ct string) []map[string]any {
	out := []map[string]any{}
	if _, byGuest := rc.params["vmid"]; byGuest {
		return out
	}
	for _, v := range st.Volumes {
		kind, _, _ := strings.Cut(v, "/")
		if (ct != "" && kind != ct) || !st.hasContent(kind) {
			continue
		}
		format := "iso"
		if kind == "vztmpl" {
			format = "tzst"
		}
		out = append(out, map[string]any{"volid": st.ID + ":" + v, "content": kind, "format": format, "size": 1 << 30, "ctime": defaultBackupTime})
	}
	return out
}

// macFor is a stable MAC address for a guest's network device.
func macFor(vmid int) string {
	return fmt.Sprintf("BC:24:11:%02X:%02X:%02X", vmid>>16&0xff, vmid>>8&0xff, vmid&0xff)
}

// handleCreate is POST /nodes/{node}/qemu or /lxc. Proxmox checks
// VM.Allocate, the VMID, the storages (and for a container the template)
// before the worker forks; the guest then exists locked "create".
func handleCreate(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		if isRestore(rc, typ) {
			return handleRestore(rc, typ) // routes_restore.go
		}
		s, c := rc.s, rc.s.cluster
		node, vmid := rc.params["node"], rc.vmid()
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(vmid), "VM.Allocate") &&
			(rc.params["pool"] == "" || !hasPriv(rc.token, "/pool/"+rc.params["pool"], "VM.Allocate")) {
			return nil, permErr("/vms/"+strconv.Itoa(vmid), "VM.Allocate")
		}
		if g := c.guest(vmid); g != nil {
			if typ == "qemu" {
				return nil, errf("unable to create VM %d - %s", vmid, inUse(g))
			}
			return nil, errf("%s", inUse(g))
		}
		cfg := map[string]string{}
		g := &Guest{VMID: vmid, Node: node, Type: typ, Status: "stopped", Lock: "create", Pool: rc.params["pool"],
			Description: rc.params["description"], CPUs: 1, MaxMem: 512 << 20}
		for k, v := range rc.params {
			switch {
			case k == "node" || k == "vmid" || k == "pool" || k == "description" || k == "start" ||
				k == "password" || k == "ssh-public-keys" || k == "ostemplate" || k == "storage":
				continue
			case k == "rootfs" || diskParamRE.MatchString(k):
				if strings.Contains(v, "media=cdrom") {
					vol, _, _ := strings.Cut(v, ",")
					if vol != "none" && vol != "cdrom" {
						if aerr := volumeExists(rc, vol, node); aerr != nil {
							return nil, aerr
						}
					}
					cfg[k] = v
					continue
				}
				m := newDiskRE.FindStringSubmatch(v)
				if m == nil {
					return nil, paramErr(map[string]string{k: "unable to parse volume: only new volumes (STORAGE:SIZE) are modelled"})
				}
				if aerr := storageUsable(rc, m[1], node, typ); aerr != nil {
					return nil, aerr
				}
				size, _ := strconv.ParseFloat(m[2], 64)
				cfg[k] = fmt.Sprintf("%s:vm-%d-disk-%d%s,size=%dG", m[1], vmid, len(diskKeys(cfg)), m[3], int(size))
				g.MaxDisk += uint64(size) << 30
			case strings.HasPrefix(k, "net"):
				cfg[k] = withMAC(typ, v, vmid)
			default:
				cfg[k] = v
			}
		}
		if typ == "lxc" {
			if aerr := volumeExists(rc, rc.params["ostemplate"], node); aerr != nil {
				return nil, aerr
			}
			if cfg["rootfs"] == "" {
				return nil, paramErr(map[string]string{"rootfs": "property is missing and it is not optional"})
			}
			if cfg["unprivileged"] == "" {
				cfg["unprivileged"] = "1" // the create default
			}
			if cfg["unprivileged"] == "0" && !hasPriv(rc.token, "/", "Sys.Modify") {
				return nil, permErr("/", "Sys.Modify")
			}
			cfg["arch"] = "amd64"
			cfg["ostype"] = "debian"
		}
		// cores and memory are answered from the model's fields (GET
		// config derives them), as numbers like real PVE.
		if n, err := strconv.Atoi(cfg["cores"]); err == nil {
			g.CPUs = n
		}
		if n, err := strconv.Atoi(cfg["memory"]); err == nil {
			g.MaxMem = uint64(n) << 20
		}
		delete(cfg, "cores")
		delete(cfg, "memory")
		g.Name = cfg["name"]
		if typ == "lxc" {
			g.Name = cfg["hostname"]
		}
		g.Config = cfg
		c.Guests = append(c.Guests, g)
		ttype := "qmcreate"
		if typ == "lxc" {
			ttype = "vzcreate"
		}
		t := s.startTask(node, ttype, vmid, rc.user(), -1, nil, func(c *Cluster, _ *[]string) string {
			if g := c.guest(vmid); g != nil {
				g.Lock = ""
			}
			return ""
		})
		t.onError = func(c *Cluster) { c.removeGuest(vmid) }
		return t.UPID, nil
	}
}

// diskParamRE matches the disk parameters of a VM.
var diskParamRE = lazyre.New(`^(ide|sata|scsi|virtio)\d+$|^(efidisk0|tpmstate0|mp\d+)$`)

func diskKeys(cfg map[string]string) []string {
	var out []string
	for k := range cfg {
		if k == "rootfs" || diskParamRE.MatchString(k) {
			out = append(out, k)
		}
	}
	return out
}

// withMAC adds the MAC address Proxmox generates: qemu "model=MAC",
// lxc "hwaddr=MAC" and "type=veth".
func withMAC(typ, v string, vmid int) string {
	parts := strings.Split(v, ",")
	if typ == "lxc" {
		return v + ",hwaddr=" + macFor(vmid) + ",type=veth"
	}
	if !strings.Contains(parts[0], "=") {
		parts[0] += "=" + macFor(vmid)
	}
	return strings.Join(parts, ",")
}

// removeGuest drops a guest from the model.
func (c *Cluster) removeGuest(vmid int) {
	c.Guests = slices.DeleteFunc(c.Guests, func(g *Guest) bool { return g.VMID == vmid })
}

// guestDiskStorages returns the storages of a guest's disks: the ones its
// Config names, else the derived default disk's "local-lvm".
func guestDiskStorages(g *Guest) []string {
	var out []string
	for k, v := range g.Config {
		if (k != "rootfs" && !diskParamRE.MatchString(k)) || strings.Contains(v, "media=cdrom") {
			continue
		}
		vol, _, _ := strings.Cut(v, ",")
		if id, _, ok := strings.Cut(vol, ":"); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		out = []string{"local-lvm"}
	}
	slices.Sort(out)
	return out
}

// handleClone is POST …/{vmid}/clone, with the checks qemu-server's
// load_and_check / pve-container's clone_vm run before forking: pool and
// target node, storage enabled (and shared for another node), the
// source's lock, storage only for full clones, a linked clone only of a
// template's base volumes, a full clone of a running container only from
// a snapshot, local storage refused for another node, the new VMID free.
func handleClone(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		s, c := rc.s, rc.s.cluster
		src, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		newid, _ := strconv.Atoi(rc.params["newid"])
		pool := rc.params["pool"]
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(newid), "VM.Allocate") && (pool == "" || !hasPriv(rc.token, "/pool/"+pool, "VM.Allocate")) {
			return nil, permErr("/vms/"+strconv.Itoa(newid), "VM.Allocate")
		}
		kind := map[string]string{"qemu": "VM", "lxc": "CT"}[typ]
		target := rc.params["target"]
		if target == src.Node || target == "localhost" {
			target = ""
		}
		if target != "" && c.node(target) == nil {
			return nil, errf("no such cluster node '%s'", target)
		}
		storage := rc.params["storage"]
		if storage != "" {
			st := c.storage(storage)
			switch {
			case st == nil:
				return nil, errf("storage '%s' does not exist", storage)
			case st.Disabled || !st.onNode(src.Node):
				return nil, errf("storage '%s' is not available on node '%s'", storage, src.Node)
			case target != "" && !st.onNode(target):
				return nil, errf("storage '%s' is not available on node '%s'", storage, target)
			case target != "" && !st.Shared:
				return nil, errf("can't clone to non-shared storage '%s'", storage)
			}
		}
		if msg := lockCheck(src); msg != "" {
			return nil, errf("%s", msg)
		}
		full := !src.Template
		if v, ok := rc.params["full"]; ok {
			full = v == "1"
		}
		if storage != "" && !full {
			return nil, errf("parameter 'storage' not allowed for linked clones")
		}
		if rc.params["format"] != "" && !full {
			return nil, errf("parameter 'format' not allowed for linked clones")
		}
		if snap := rc.params["snapname"]; snap != "" && !slices.ContainsFunc(src.Snapshots, func(sn *Snapshot) bool { return sn.Name == snap }) {
			return nil, errf("snapshot '%s' does not exist", snap)
		}
		running := src.Status == "running"
		shared := true
		for _, id := range guestDiskStorages(src) {
			if storage != "" {
				id = storage
			}
			st := c.storage(id)
			if st == nil || !st.Shared {
				shared = false
			}
			if !hasPriv(rc.token, "/storage/"+id, "Datastore.AllocateSpace") {
				return nil, permErr("/storage/"+id, "Datastore.AllocateSpace")
			}
			if st != nil && !st.hasContent(contentFor[typ][0]) {
				return nil, errf("storage '%s' does not support %s", id, contentFor[typ][1])
			}
			switch {
			case full && typ == "lxc" && running && rc.params["snapname"] == "":
				return nil, errf("Cannot do full clones on a running container without snapshots")
			case !full && !src.Template && typ == "qemu":
				return nil, errf("Linked clone feature is not supported for drive '%s'", firstDisk(src))
			case !full && !src.Template:
				return nil, errf("Linked clone feature for '%s:vm-%d-disk-0' is not available", id, src.VMID)
			}
		}
		if target != "" && !shared {
			return nil, errf("can't clone %s to node '%s' (%s uses local storage)", kind, target, kind)
		}
		if g := c.guest(newid); g != nil {
			if typ == "qemu" {
				return nil, errf("unable to create VM %d: config file already exists", newid)
			}
			return nil, errf("%s", inUse(g))
		}
		ng := cloneModel(src, newid, rc.params, storage, full)
		c.Guests = append(c.Guests, ng)
		if typ == "lxc" {
			src.Lock = "disk"
		}
		ttype := "qmclone"
		if typ == "lxc" {
			ttype = "vzclone"
		}
		srcID := src.VMID
		unlockSource := func(c *Cluster) {
			if g := c.guest(srcID); g != nil && typ == "lxc" && g.Lock == "disk" {
				g.Lock = ""
			}
		}
		t := s.startTask(src.Node, ttype, srcID, rc.user(), -1,
			[]string{fmt.Sprintf("create %s clone of %s", map[bool]string{true: "full", false: "linked"}[full], firstDisk(src))},
			func(c *Cluster, _ *[]string) string {
				unlockSource(c)
				g := c.guest(newid)
				if g == nil {
					return fmt.Sprintf("clone failed: unable to find configuration of %s %d", kind, newid)
				}
				g.Lock = ""
				if target != "" {
					g.Node = target
				}
				return ""
			})
		t.onError = func(c *Cluster) {
			unlockSource(c)
			c.removeGuest(newid)
		}
		return t.UPID, nil
	}
}

// firstDisk names the source's first disk key ("scsi0", "rootfs").
func firstDisk(g *Guest) string {
	keys := diskKeys(g.Config)
	if len(keys) > 0 {
		slices.Sort(keys)
		return keys[0]
	}
	if g.Type == "lxc" {
		return "rootfs"
	}
	return "scsi0"
}

// cloneModel is the new guest a clone writes at once: the source's
// configuration with new disk volumes, the name, description and pool
// asked for, no snapshots, not a template, locked until the task ends.
func cloneModel(src *Guest, newid int, params map[string]string, storage string, full bool) *Guest {
	ng := src.clone()
	g := &ng
	g.VMID, g.Status, g.Template, g.Snapshots, g.CurrentSnapshot = newid, "stopped", false, nil, ""
	g.HAManaged, g.HAState, g.Paused, g.Uptime, g.CPU, g.Mem, g.Disk = false, "", false, 0, 0, 0, 0
	g.Lock = "clone"
	if g.Type == "lxc" {
		g.Lock = "create"
	}
	g.Pool = params["pool"]
	if g.Type == "qemu" {
		g.Name = "Copy-of-VM-" + src.Name
		if v := params["name"]; v != "" {
			g.Name = v
		}
	} else if v := params["hostname"]; v != "" {
		g.Name = v
	}
	if v := params["description"]; v != "" {
		g.Description = v
	}
	g.Config = maps.Clone(src.Config)
	if g.Config == nil {
		g.Config = map[string]string{}
	}
	delete(g.Config, "description")
	delete(g.Config, "name")
	delete(g.Config, "hostname")
	size := fmt.Sprintf("size=%dG", max(src.MaxDisk>>30, 1))
	disks := diskKeys(src.Config)
	if len(disks) == 0 {
		disks = []string{firstDisk(src)}
	}
	for i, k := range disks {
		id, sz := guestDiskStorages(src)[0], size
		if old, ok := src.Config[k]; ok {
			vol, _, _ := strings.Cut(old, ",")
			id, _, _ = strings.Cut(vol, ":")
			for _, p := range strings.Split(old, ",") {
				if strings.HasPrefix(p, "size=") {
					sz = p
				}
			}
		}
		if storage != "" {
			id = storage
		}
		vol := fmt.Sprintf("%s:vm-%d-disk-%d", id, newid, i)
		if !full {
			vol = fmt.Sprintf("%s:base-%d-disk-%d/vm-%d-disk-%d", id, src.VMID, i, newid, i)
		}
		g.Config[k] = vol + "," + sz
	}
	return g
}
