package proxmoxtest

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// The config class's endpoints: GET …/pending, PUT|POST qemu config, PUT
// lxc config and PUT …/resize for both types, as qemu-server
// (API2/Qemu.pm update_vm_api, resize_vm, QemuServer.pm
// vmconfig_hotplug_pending) and pve-container (API2/LXC/Config.pm,
// API2/LXC.pm resize_vm, LXC/Config.pm vmconfig_hotplug_pending) do them.

// vmConfigPrivs is qemu-server's $vm_config_perm_list: the route check
// needs any one of them; the handler then checks each key's own.
var vmConfigPrivs = []string{"VM.Config.Disk", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Memory",
	"VM.Config.Network", "VM.Config.HWType", "VM.Config.Options", "VM.Config.Cloudinit"}

func configWriteRoutes() []*route {
	sizeRE := regexp.MustCompile(`^(?:\+?\d+(\.\d+)?[KMGT]?)$`)
	var qemuDisks, lxcDisks []string
	for _, f := range []struct {
		name string
		n    int
	}{{"ide", 3}, {"scsi", 30}, {"virtio", 15}, {"sata", 5}} {
		for i := 0; i <= f.n; i++ {
			qemuDisks = append(qemuDisks, f.name+strconv.Itoa(i))
		}
	}
	qemuDisks = append(qemuDisks, "efidisk0", "tpmstate0")
	lxcDisks = append(lxcDisks, "rootfs")
	for i := 0; i <= 255; i++ {
		lxcDisks = append(lxcDisks, "mp"+strconv.Itoa(i))
	}
	digest := param{name: "digest", typ: tString, maxLen: 40, optional: true}
	size := param{name: "size", typ: tString, pattern: sizeRE}
	diskPerm := &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Config.Disk"}}
	return []*route{
		{method: "GET", path: "/nodes/{node}/qemu/{vmid}/pending", params: guestParams(), perm: vmAudit, proxy: true, handle: handleGuestPending("qemu")},
		{method: "GET", path: "/nodes/{node}/lxc/{vmid}/pending", params: guestParams(), perm: vmAudit, proxy: true, handle: handleGuestPending("lxc")},
		{method: "PUT", path: "/nodes/{node}/qemu/{vmid}/config", params: qemuConfigParams(false), proxy: true,
			perm: &permSpec{path: "/vms/{vmid}", privs: vmConfigPrivs, any: true}, handle: handleConfigUpdate("qemu", false)},
		{method: "POST", path: "/nodes/{node}/qemu/{vmid}/config", params: qemuConfigParams(true), proxy: true,
			perm: &permSpec{path: "/vms/{vmid}", privs: vmConfigPrivs, any: true}, handle: handleConfigUpdate("qemu", true)},
		{method: "PUT", path: "/nodes/{node}/lxc/{vmid}/config", params: lxcConfigParams(), proxy: true,
			perm:   &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Config.Disk", "VM.Config.CPU", "VM.Config.Memory", "VM.Config.Network", "VM.Config.Options"}, any: true},
			handle: handleConfigUpdate("lxc", false)},
		{method: "PUT", path: "/nodes/{node}/qemu/{vmid}/resize", proxy: true, perm: diskPerm,
			params: guestParams(param{name: "disk", typ: tString, enum: qemuDisks}, size, digest, pBool("skiplock")), handle: handleResize("qemu")},
		{method: "PUT", path: "/nodes/{node}/lxc/{vmid}/resize", proxy: true, perm: &permSpec{path: "/vms/{vmid}", privs: []string{"VM.Config.Disk"}, any: true},
			params: guestParams(param{name: "disk", typ: tString, enum: lxcDisks}, size, digest), handle: handleResize("lxc")},
	}
}

// configControlParams are the update endpoints' parameters that are not
// config keys.
var configControlParams = map[string]bool{"node": true, "vmid": true, "digest": true, "delete": true, "revert": true,
	"force": true, "skiplock": true, "background_delay": true, "import-working-storage": true}

// Digest mismatch errors: qemu-server dies with its own text,
// pve-container through PVE::Tools::assert_if_modified.
const (
	qemuDigestMismatch = "checksum mismatch (file change by other user?)"
	lxcDigestMismatch  = "detected modified configuration - file changed by other user? Try again."
)

// handleConfigUpdate is PUT (sync, answers null) or, for qemu, POST
// (async: a qmconfig task) …/config. The early checks run before the
// answer in both: the digest and the lock (qemu checks the digest first,
// pve-container the lock), balloon ≤ memory (qemu), the per-key
// privileges. Changes go to the pending section; a stopped guest gets
// them applied at once, a running one only those it can hotplug — the
// rest stays pending until the next start.
func handleConfigUpdate(typ string, async bool) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		set := map[string]string{}
		for k, v := range rc.params {
			if !configControlParams[k] {
				set[k] = v
			}
		}
		del := splitList(rc.params["delete"])
		revert := splitList(rc.params["revert"])
		if len(set) == 0 && len(del) == 0 && len(revert) == 0 {
			return nil, errf("no options specified")
		}
		for _, k := range del {
			if _, ok := set[k]; ok {
				return nil, paramErr(map[string]string{"delete": fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k)})
			}
			if !configOptionExists(typ, k) {
				return nil, paramErr(map[string]string{"delete": fmt.Sprintf("unknown option '%s'", k)})
			}
		}
		keys := slices.Sorted(maps.Keys(set))
		for _, k := range append(slices.Clone(del), keys...) {
			if aerr := checkKeyPriv(rc, typ, k); aerr != nil {
				return nil, aerr
			}
		}
		check := func(g *Guest) string {
			d := rc.params["digest"]
			stale := d != "" && d != configDigest(g, currentConfig(g))
			if typ == "qemu" {
				if stale {
					return qemuDigestMismatch
				}
				if msg := lockCheck(g); msg != "" {
					return msg
				}
				return balloonCheck(g, set)
			}
			if msg := lockCheck(g); msg != "" {
				return msg
			}
			if stale {
				return lxcDigestMismatch
			}
			return ""
		}
		if msg := check(g); msg != "" {
			return nil, errf("%s", msg)
		}
		apply := func(g *Guest) {
			for _, k := range revert {
				delete(g.Pending, k)
				g.PendingDelete = slices.DeleteFunc(g.PendingDelete, func(s string) bool { return s == k })
			}
			updateConfig(g, set, del)
		}
		if !async {
			apply(g)
			return nil, nil
		}
		return rc.s.guestTask(rc, g, "qmconfig", func(g *Guest) string {
			if msg := check(g); msg != "" {
				return msg
			}
			apply(g)
			return ""
		})
	}
}

// configOptionExists is option_exists: a config key of that guest type
// (indexed keys within their range).
func configOptionExists(typ, k string) bool {
	ps := lxcConfigParams()
	if typ == "qemu" {
		ps = qemuConfigParams(false)
	}
	known := make(map[string]*param, len(ps))
	for i := range ps {
		if !configControlParams[ps[i].name] && !strings.HasSuffix(ps[i].name, "[n]") {
			known[ps[i].name] = &ps[i]
		}
	}
	if known[k] != nil {
		return true
	}
	for i := range ps {
		known[ps[i].name] = &ps[i]
	}
	return indexedParam(known, k) != nil
}

// Per-key privileges (qemu-server check_vm_modify_config_perm,
// pve-container check_ct_modify_config_perm), for the keys the fake
// models; a qemu key none of its groups names is root-only.
var (
	qemuCPUKeys     = []string{"cores", "cpu", "cpulimit", "cpuunits", "numa", "smp", "sockets", "vcpus", "affinity"}
	qemuMemoryKeys  = []string{"memory", "balloon", "shares"}
	qemuOptionsKeys = []string{"agent", "autostart", "bios", "description", "keyboard", "localtime", "migrate_downtime",
		"migrate_speed", "name", "onboot", "ostype", "protection", "reboot", "startup", "tablet", "vmstatestorage", "tags"}
	qemuHWTypeKeys    = []string{"acpi", "hotplug", "kvm", "tdf", "vga", "watchdog", "audio0", "freeze", "machine", "scsihw", "vmgenid"}
	qemuCloudinitKeys = []string{"ciuser", "cipassword", "citype", "ciupgrade", "nameserver", "searchdomain", "sshkeys"}
	qemuDiskKeyRE     = lazyre.New(`^(ide|sata|scsi|virtio|unused)\d+$|^(efidisk0|tpmstate0|cdrom)$`)
)

func checkKeyPriv(rc *reqCtx, typ, k string) *apiError {
	path := "/vms/" + rc.params["vmid"]
	need := func(privs ...string) *apiError {
		for _, p := range privs {
			if hasPriv(rc.token, path, p) {
				return nil
			}
		}
		return permErr(path, strings.Join(privs, "|"))
	}
	if typ == "lxc" {
		switch {
		case k == "cores" || k == "cpulimit" || k == "cpuunits":
			return need("VM.Config.CPU")
		case k == "memory" || k == "swap":
			return need("VM.Config.Memory")
		case k == "rootfs" || strings.HasPrefix(k, "mp"):
			return need("VM.Config.Disk")
		case strings.HasPrefix(k, "net") || k == "nameserver" || k == "searchdomain":
			return need("VM.Config.Network")
		case strings.HasPrefix(k, "dev") || k == "lxc" || k == "hookscript" || k == "features":
			return errf("only root can set '%s' config", k)
		}
		return need("VM.Config.Options")
	}
	switch {
	case slices.Contains(qemuCPUKeys, k) || strings.HasPrefix(k, "numa"):
		return need("VM.Config.CPU")
	case slices.Contains(qemuMemoryKeys, k):
		return need("VM.Config.Memory")
	case slices.Contains(qemuOptionsKeys, k):
		return need("VM.Config.Options")
	case slices.Contains(qemuHWTypeKeys, k):
		return need("VM.Config.HWType")
	case qemuDiskKeyRE.Regexp().MatchString(k):
		return need("VM.Config.Disk", "VM.Config.CDROM")
	case strings.HasPrefix(k, "net"):
		return need("VM.Config.Network")
	case slices.Contains(qemuCloudinitKeys, k) || strings.HasPrefix(k, "ipconfig"):
		return need("VM.Config.Cloudinit", "VM.Config.Network")
	}
	return errf("only root can set '%s' config", k)
}

// balloonCheck is update_vm_api's "balloon value too large".
func balloonCheck(g *Guest, set map[string]string) string {
	if set["memory"] == "" && set["balloon"] == "" {
		return ""
	}
	cur := currentConfig(g)
	pick := func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		if v, ok := g.Pending[k]; ok {
			return v
		}
		if v, ok := cur[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	mem, _ := strconv.Atoi(strings.TrimPrefix(pick("memory"), "current="))
	if mem == 0 {
		mem = 512
	}
	if b, _ := strconv.Atoi(pick("balloon")); b > mem {
		return "balloon value too large (must be smaller than assigned memory)"
	}
	return ""
}

// updateConfig writes the changes to the pending section and applies
// what the guest's state allows, like update_vm_api/update_pct_config.
func updateConfig(g *Guest, set map[string]string, del []string) {
	if g.Pending == nil {
		g.Pending = map[string]string{}
	}
	for _, k := range del {
		delete(g.Pending, k)
		if !slices.Contains(g.PendingDelete, k) {
			g.PendingDelete = append(g.PendingDelete, k)
		}
	}
	for k, v := range set {
		if k == "tags" {
			v = normalizeTags(v)
		}
		g.Pending[k] = v
		g.PendingDelete = slices.DeleteFunc(g.PendingDelete, func(s string) bool { return s == k })
	}
	cleanupPending(g)
	if g.Status != "running" {
		applyPending(g)
		return
	}
	for _, k := range slices.Clone(g.PendingDelete) {
		if hotDelete(g, k) {
			deleteConfigKey(g, k)
			g.PendingDelete = slices.DeleteFunc(g.PendingDelete, func(s string) bool { return s == k })
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g.Pending)) {
		if hotplug(g, k, g.Pending[k]) {
			setConfigKey(g, k, g.Pending[k])
			delete(g.Pending, k)
		}
	}
}

// cleanupPending drops pending values equal to the current ones and
// pending deletions of keys that are not set (cleanup_pending).
func cleanupPending(g *Guest) {
	cur := currentConfig(g)
	for k, v := range g.Pending {
		if c, ok := cur[k]; ok && fmt.Sprint(c) == v {
			delete(g.Pending, k)
		}
	}
	g.PendingDelete = slices.DeleteFunc(g.PendingDelete, func(k string) bool {
		_, set := cur[k]
		return !set
	})
}

// applyPending applies every pending change (vmconfig_apply_pending): a
// stopped guest's update, and every start.
func applyPending(g *Guest) {
	for _, k := range g.PendingDelete {
		deleteConfigKey(g, k)
	}
	for _, k := range slices.Sorted(maps.Keys(g.Pending)) {
		setConfigKey(g, k, g.Pending[k])
	}
	g.Pending, g.PendingDelete = nil, nil
}

// Options a running guest takes at once: qemu-server's $fast_plug_option
// (plus the cloud-init keys) and pve-container's $LXC_FASTPLUG_OPTIONS.
var (
	qemuFastPlug = []string{"description", "hookscript", "lock", "migrate_downtime", "migrate_speed", "name", "onboot",
		"protection", "shares", "startup", "tags", "vmstatestorage", "ciuser", "cipassword", "citype", "ciupgrade",
		"nameserver", "searchdomain", "sshkeys"}
	lxcFastPlug = []string{"description", "onboot", "startup", "protection", "hostname", "hookscript", "cores", "tags", "lock"}
)

// hotplug reports whether a running guest takes the change of k to v at
// once (vmconfig_hotplug_pending), else it stays pending.
func hotplug(g *Guest, k, v string) bool {
	if g.Type == "lxc" {
		return slices.Contains(lxcFastPlug, k) || k == "cpulimit" || k == "cpuunits" || k == "memory" || k == "swap" || strings.HasPrefix(k, "net")
	}
	features := hotplugFeatures(g)
	switch {
	case slices.Contains(qemuFastPlug, k) || strings.HasPrefix(k, "ipconfig"):
		return true
	case k == "balloon":
		// Enabling or disabling the balloon device is not hotpluggable.
		old, set := currentConfig(g)["balloon"]
		return (set && fmt.Sprint(old) == "0") == (v == "0")
	case k == "cpuunits" || k == "cpulimit" || k == "agent":
		return true
	case k == "memory":
		return features["memory"]
	case k == "vcpus":
		return features["cpu"]
	case strings.HasPrefix(k, "net"):
		return features["network"]
	}
	return false
}

// hotDelete reports whether a running guest drops k at once.
func hotDelete(g *Guest, k string) bool {
	if g.Type == "lxc" {
		return slices.Contains(lxcFastPlug, k) || k == "swap" || k == "cpulimit" || k == "cpuunits" || strings.HasPrefix(k, "net")
	}
	if slices.Contains(qemuFastPlug, k) || k == "cpuunits" || k == "cpulimit" {
		return true
	}
	if k == "balloon" {
		old, set := currentConfig(g)["balloon"]
		return !(set && fmt.Sprint(old) == "0")
	}
	return false
}

// hotplugFeatures parses the VM's "hotplug" option (default
// network,disk,usb; "1" means the default, "0" none).
func hotplugFeatures(g *Guest) map[string]bool {
	v, ok := g.Config["hotplug"]
	if !ok || v == "1" {
		v = "network,disk,usb"
	}
	out := map[string]bool{}
	if v == "0" {
		return out
	}
	for _, f := range strings.Split(v, ",") {
		out[f] = true
	}
	return out
}

// setConfigKey applies one key to the model: keys the model has fields
// for change them (so status and listings follow), the rest go to Config.
func setConfigKey(g *Guest, k, v string) {
	switch {
	case k == "cores":
		g.CPUs, _ = strconv.Atoi(v)
	case k == "memory":
		mib, _ := strconv.ParseUint(strings.TrimPrefix(v, "current="), 10, 64)
		g.MaxMem = mib << 20
		if g.Status == "running" && g.Mem > g.MaxMem {
			g.Mem = g.MaxMem
		}
	case (k == "name" && g.Type == "qemu") || (k == "hostname" && g.Type == "lxc"):
		g.Name = v
	case k == "description":
		g.Description = v
	case k == "tags":
		g.Tags = splitList(v)
	default:
		if g.Config == nil {
			g.Config = map[string]string{}
		}
		g.Config[k] = v
	}
}

// deleteConfigKey removes one key; model fields fall back to Proxmox's
// defaults (1 core, 512 MiB).
func deleteConfigKey(g *Guest, k string) {
	delete(g.Config, k)
	switch {
	case k == "cores":
		g.CPUs = 1
	case k == "memory":
		g.MaxMem = 512 << 20
	case (k == "name" && g.Type == "qemu") || (k == "hostname" && g.Type == "lxc"):
		g.Name = ""
	case k == "description":
		g.Description = ""
	case k == "tags":
		g.Tags = nil
	}
}

// normalizeTags is get_unique_tags with the default ordering: unique,
// sorted, joined by ";".
func normalizeTags(v string) string {
	tags := splitList(v)
	sort.Strings(tags)
	return strings.Join(slices.Compact(tags), ";")
}

// handleResize is PUT …/resize. qemu-server runs every check in its
// "resize" worker (a digest mismatch, a lock, a missing disk, a CD-ROM
// and a smaller size are task errors); pve-container checks the lock,
// the digest and the size before it forks the worker (500 answers), and
// refuses the unchanged size too.
func handleResize(typ string) func(rc *reqCtx) (any, *apiError) {
	return func(rc *reqCtx) (any, *apiError) {
		g, aerr := loadGuest(rc, typ)
		if aerr != nil {
			return nil, aerr
		}
		disk, sizeStr, digest := rc.params["disk"], rc.params["size"], rc.params["digest"]
		// check returns the new size, or an error text.
		check := func(g *Guest) (uint64, string) {
			cur := currentConfig(g)
			stale := digest != "" && digest != configDigest(g, cur)
			if typ == "qemu" && stale {
				return 0, qemuDigestMismatch
			}
			if msg := lockCheck(g); msg != "" {
				return 0, msg
			}
			if stale {
				return 0, lxcDigestMismatch
			}
			line, ok := cur[disk].(string)
			if !ok || line == "" {
				if typ == "lxc" {
					// parse_volume of an unset key (wording not verified
					// against a real server).
					return 0, fmt.Sprintf("unable to parse volume of '%s'", disk)
				}
				return 0, fmt.Sprintf("disk '%s' does not exist", disk)
			}
			if typ == "qemu" && strings.Contains(line, "media=cdrom") {
				return 0, "you can't resize a cdrom"
			}
			size, _ := diskSize(line)
			add := strings.HasPrefix(sizeStr, "+")
			n, _ := parseSize(strings.TrimPrefix(sizeStr, "+"))
			if add {
				n += float64(size)
			}
			newSize := uint64(n)
			if newSize < size {
				if typ == "lxc" {
					return 0, "unable to shrink disk size"
				}
				return 0, "shrinking disks is not supported"
			}
			if newSize == size && typ == "lxc" {
				return 0, "disk is already at specified size"
			}
			return newSize, ""
		}
		if typ == "lxc" {
			if _, msg := check(g); msg != "" {
				return nil, errf("%s", msg)
			}
		}
		return rc.s.guestTask(rc, g, "resize", func(g *Guest) string {
			n, msg := check(g)
			if msg != "" {
				return msg
			}
			line := currentConfig(g)[disk].(string)
			if size, _ := diskSize(line); size == n {
				return "" // qemu: nothing to do
			}
			if g.Config == nil {
				g.Config = map[string]string{}
			}
			g.Config[disk] = withDiskSize(line, n)
			if disk == "scsi0" || disk == "rootfs" {
				g.MaxDisk = n
			}
			return ""
		})
	}
}

// diskSize returns the size= of a disk line in bytes.
func diskSize(line string) (uint64, bool) {
	for _, part := range strings.Split(line, ",") {
		if v, ok := strings.CutPrefix(part, "size="); ok {
			n, ok := parseSize(v)
			return uint64(n), ok
		}
	}
	return 0, false
}

// parseSize is PVE::JSONSchema::parse_size: a number with an optional
// K, M, G or T (powers of 1024).
func parseSize(s string) (float64, bool) {
	mult := 1.0
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) {
		return 0, false
	}
	return n * mult, true
}

// formatSize is PVE::JSONSchema::format_size: the largest unit that
// divides the size exactly.
func formatSize(n uint64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(n, 10)
}

// withDiskSize rewrites the size= of a disk line (print_drive /
// print_ct_mountpoint keep the other options).
func withDiskSize(line string, n uint64) string {
	parts := strings.Split(line, ",")
	for i, p := range parts {
		if strings.HasPrefix(p, "size=") {
			parts[i] = "size=" + formatSize(n)
			return strings.Join(parts, ",")
		}
	}
	return line + ",size=" + formatSize(n)
}
