package proxmoxtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// The backup run: POST /nodes/{node}/vzdump (pve-manager API2/VZDump.pm
// and VZDump.pm). The checks that run before the worker forks answer
// synchronously: CLI-only options, root-only options, the privileges
// some options need, the selection, VM.Backup on each selected guest
// and Datastore.AllocateSpace on the storage. A selection with no guest
// on this node answers "OK" and starts nothing. The worker (a vzdump
// task, UPID id = the vmid when one guest is selected) fails a guest
// that is locked and a storage without content "backup"; otherwise it
// adds one backup per guest to the storage, created when the task ends,
// and writes the log of the recorded runs (pve6
// tasks-log-vzdump-lxc-ok.json).

func backupRoutes() []*route {
	min0 := i64(0)
	storage := param{name: "storage", typ: tString, format: "pve-storage-id", optional: true}
	node := param{name: "node", typ: tString, format: "pve-node", optional: true}
	ps := []param{
		pBool("all"), pInt("bwlimit", min0),
		pEnum("compress", "0", "1", "gzip", "lzo", "zstd"),
		pStr("dumpdir"), pStr("exclude"),
		{name: "exclude-path", typ: tArray, optional: true},
		pStr("fleecing").at(8, 0, 0),
		{name: "ionice", typ: tInteger, min: min0, max: i64(8), optional: true},
		param{name: "job-id", typ: tString, maxLen: 50, optional: true}.at(8, 0, 0),
		pInt("lockwait", min0),
		pEnum("mailnotification", "always", "failure"),
		pStr("mailto"),
		{name: "maxfiles", typ: tInteger, min: i64(1), optional: true},
		pEnum("mode", "snapshot", "suspend", "stop"),
		node,
		{name: "notes-template", typ: tString, maxLen: 1024, optional: true},
		pEnum("notification-mode", "auto", "legacy-sendmail", "notification-system").at(8, 0, 0),
		// 8.x had these two beside notification-mode; 9.0 dropped them.
		{name: "notification-policy", typ: tString, optional: true, enum: []string{"always", "failure", "never"}, since: [3]int{8, 0, 0}, until: [3]int{9, 0, 0}},
		{name: "notification-target", typ: tString, optional: true, since: [3]int{8, 0, 0}, until: [3]int{9, 0, 0}},
		pEnum("pbs-change-detection-mode", "legacy", "data", "metadata").at(8, 0, 0),
		pStr("performance"), pInt("pigz", nil), pStr("pool"),
		pBool("protected"), pStr("prune-backups"), pBool("quiet"), pBool("remove"),
		pStr("script"), pBool("stdexcludes"), pBool("stdout"), pBool("stop"),
		pInt("stopwait", min0), storage, pStr("tmpdir"), pStr("vmid"), pInt("zstd", nil),
	}
	return []*route{
		{method: "POST", path: "/nodes/{node}/vzdump", params: ps, proxy: true, handle: handleVZDump},
		{method: "GET", path: "/cluster/backup", perm: rootAudit, handle: handleBackupJobs},
		{method: "DELETE", path: "/nodes/{node}/storage/{storage}/content/{volume}", proxy: true, params: []param{
			{name: "delay", typ: tInteger, min: i64(1), max: i64(30), optional: true}, pNode(),
			{name: "storage", typ: tString, format: "pve-storage-id", optional: true}, {name: "volume", typ: tString}},
			handle: handleVolumeDelete},
	}
}

// vzdumpRootOnly are the options only root@pam may set (mgr
// API2/Backup.pm assert_param_permission_common); an API token's user is
// never root@pam.
var vzdumpRootOnly = []string{"dumpdir", "job-id", "script", "tmpdir"}

// notesVarRE finds vzdump's template variables.
var notesVarRE = lazyre.New(`\{\{([^}]*)\}\}`)

func handleVZDump(rc *reqCtx) (any, *apiError) {
	s, c := rc.s, rc.s.cluster
	p := rc.params
	nodeName := p["node"]
	if p["stdout"] == "1" {
		return nil, paramErr(map[string]string{"stdout": "option is only allowed on the command line interface."})
	}
	for _, k := range vzdumpRootOnly {
		if _, ok := p[k]; ok {
			return nil, paramErr(map[string]string{k: "Only root may set this option."})
		}
	}
	for _, k := range []string{"bwlimit", "ionice", "performance"} {
		if _, ok := p[k]; ok && !hasPriv(rc.token, "/", "Sys.Modify") {
			return nil, permErr("/", "Sys.Modify")
		}
	}
	if p["stop"] == "1" && !hasPriv(rc.token, "/nodes/"+nodeName, "Sys.Modify") {
		return nil, permErr("/nodes/"+nodeName, "Sys.Modify")
	}
	_, hasVMID := p["vmid"]
	for _, k := range []string{"all", "exclude", "pool"} {
		if _, ok := p[k]; ok && hasVMID {
			return nil, paramErr(map[string]string{k: "option conflicts with option 'vmid'"})
		}
	}
	if !hasVMID && p["all"] != "1" && p["pool"] == "" && p["exclude"] == "" && p["stop"] != "1" {
		return nil, paramErr(map[string]string{"vmid": "property is missing"})
	}
	for _, k := range []string{"notes-template", "protected"} {
		if _, ok := p[k]; ok && p["storage"] == "" {
			return nil, paramErr(map[string]string{"storage": fmt.Sprintf("missing property - '%s' requires this property", k)})
		}
	}
	if tmpl, ok := p["notes-template"]; ok {
		if strings.ContainsAny(tmpl, "\n") {
			return nil, paramErr(map[string]string{"notes-template": "contains a line feed"})
		}
		for _, m := range notesVarRE.Regexp().FindAllStringSubmatchIndex(tmpl, -1) {
			if v := tmpl[m[2]:m[3]]; !slices.Contains([]string{"cluster", "guestname", "node", "vmid"}, v) {
				return nil, paramErr(map[string]string{"notes-template": fmt.Sprintf("found unknown: variable '%s' at char %d", v, m[0])})
			}
		}
	}
	if _, ok := p["prune-backups"]; ok && p["storage"] != "" && !hasPriv(rc.token, "/storage/"+p["storage"], "Datastore.Allocate") {
		return nil, permErr("/storage/"+p["storage"], "Datastore.Allocate")
	}
	if !hasVMID {
		return nil, errf("only a vmid selection is modelled by the fake")
	}
	var local []*Guest
	for id := range strings.SplitSeq(p["vmid"], ",") {
		vmid, err := strconv.Atoi(strings.TrimSpace(id))
		if err != nil || !vmidRE.MatchString(strings.TrimSpace(id)) {
			return nil, paramErr(map[string]string{"vmid": "invalid format - value does not look like a valid VM ID\n"})
		}
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(vmid), "VM.Backup") {
			return nil, permErr("/vms/"+strconv.Itoa(vmid), "VM.Backup")
		}
		g := c.guest(vmid)
		if g == nil {
			return nil, errf("guest %d does not exist", vmid)
		}
		if g.Node == nodeName {
			local = append(local, g)
		}
	}
	storageID := p["storage"]
	if storageID == "" {
		storageID = "local"
	}
	if !hasPriv(rc.token, "/storage/"+storageID, "Datastore.AllocateSpace") {
		return nil, permErr("/storage/"+storageID, "Datastore.AllocateSpace")
	}
	if len(local) == 0 {
		// Every selected guest lives on another node: nothing to do here.
		return "OK", nil
	}
	id := ""
	if len(local) == 1 {
		id = strconv.Itoa(local[0].VMID)
	}
	mode := cmpOr(p["mode"], "snapshot")
	compress := cmpOr(p["compress"], "0")
	args := "vzdump " + p["vmid"]
	for _, k := range []string{"compress", "mode", "notes-template", "protected", "remove", "storage"} {
		if v, ok := p[k]; ok {
			args += " --" + k + " " + v
		}
	}
	ids := make([]int, len(local))
	for i, g := range local {
		ids[i] = g.VMID
	}
	log := []string{"INFO: starting new backup job: " + args + " --node " + nodeName}
	t := s.startTaskID(nodeName, "vzdump", id, rc.user(), -1, log, func(c *Cluster, log *[]string) string {
		st := c.storage(storageID)
		switch {
		case st == nil:
			return fmt.Sprintf("could not get storage information for '%s': storage '%s' does not exist", storageID, storageID)
		case !st.hasContent("backup"):
			return fmt.Sprintf("storage '%s' does not support backups", storageID)
		}
		failed := false
		for _, vmid := range ids {
			g := c.guest(vmid)
			if g == nil {
				continue
			}
			now := time.Now().UTC()
			*log = append(*log, fmt.Sprintf("INFO: Starting Backup of VM %d (%s)", vmid, g.Type),
				"INFO: Backup started at "+now.Format("2006-01-02 15:04:05"))
			if g.Lock != "" {
				failed = true
				kind := map[string]string{"qemu": "VM", "lxc": "CT"}[g.Type]
				*log = append(*log, fmt.Sprintf("ERROR: Backup of VM %d failed - %s is locked (%s)", vmid, kind, g.Lock),
					"INFO: Failed at "+now.Format("2006-01-02 15:04:05"))
				continue
			}
			format := map[string]string{"qemu": "vma", "lxc": "tar"}[g.Type]
			if ext := map[string]string{"zstd": "zst", "gzip": "gz", "lzo": "lzo", "1": "lzo"}[compress]; ext != "" {
				format += "." + ext
			}
			src := g.clone()
			b := &Backup{VMID: vmid, Type: g.Type, CTime: now.Unix(), Size: max(g.MaxDisk/8, 1<<20), Format: format,
				Protected: p["protected"] == "1", source: &src}
			if !st.Shared {
				b.Node = g.Node
			}
			if st.Type == "pbs" {
				b.Format = "" // pbs-vm or pbs-ct, from the storage's type
			}
			if tmpl, ok := p["notes-template"]; ok {
				b.Notes = expandNotes(tmpl, c, g)
			} else {
				b.Notes = g.Name
			}
			*log = append(*log,
				"INFO: status = "+g.Status,
				"INFO: backup mode: "+mode,
				"INFO: ionice priority: 7",
				"INFO: creating archive '/var/lib/vz/dump/"+strings.TrimPrefix(backupVolid(storageID, b, format), storageID+":backup/")+"'",
				fmt.Sprintf("INFO: archive file size: %dMB", b.Size>>20),
				fmt.Sprintf("INFO: Finished Backup of VM %d (00:00:01)", vmid),
				"INFO: Backup finished at "+now.Format("2006-01-02 15:04:05"))
			st.Backups = append(st.Backups, b)
		}
		if failed {
			*log = append(*log, "INFO: Backup job finished with errors")
			return "job errors"
		}
		*log = append(*log, "INFO: Backup job finished successfully")
		return ""
	})
	return t.UPID, nil
}

// expandNotes fills in vzdump's template variables.
func expandNotes(tmpl string, c *Cluster, g *Guest) string {
	return notesVarRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		switch m {
		case "{{cluster}}":
			return c.Name
		case "{{guestname}}":
			return g.Name
		case "{{node}}":
			return g.Node
		case "{{vmid}}":
			return strconv.Itoa(g.VMID)
		}
		return m
	})
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// handleVolumeDelete is DELETE /nodes/{node}/storage/{storage}/content/{volume}
// for backup volumes (pve-storage API2/Storage/Content.pm delete): the
// volume id names its storage (the path's storage may be omitted, as the
// schema allows); a backup needs Datastore.AllocateSpace on the storage
// and VM.Backup on its guest (or Datastore.Allocate). It answers the UPID
// of an imgdel task (id "<vmid>@<storage>", pve6
// storage-content-delete-backup.json) whose worker refuses a protected
// backup ("cannot remove protected volume …") and otherwise removes it
// with its notes. delay is not modelled beyond its range.
func handleVolumeDelete(rc *reqCtx) (any, *apiError) {
	s, c := rc.s, rc.s.cluster
	node, volid := rc.params["node"], rc.params["volume"]
	sid, volname, ok := strings.Cut(volid, ":")
	if !ok {
		sid, volname = rc.params["storage"], volid
	}
	st := c.storage(sid)
	if st == nil {
		return nil, errf("storage '%s' does not exist", sid)
	}
	if !st.onNode(node) {
		return nil, errf("storage '%s' is not available on node '%s'", sid, node)
	}
	var b *Backup
	for _, cand := range st.Backups {
		if volidOf(st, cand) == sid+":"+volname && (st.Shared || cand.Node == "" || cand.Node == node) {
			b = cand
		}
	}
	if b == nil {
		return nil, errf("volume '%s' does not exist", sid+":"+volname)
	}
	if !hasPriv(rc.token, "/storage/"+sid, "Datastore.Allocate") {
		if !hasPriv(rc.token, "/storage/"+sid, "Datastore.AllocateSpace") {
			return nil, permErr("/storage/"+sid, "Datastore.AllocateSpace")
		}
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(b.VMID), "VM.Backup") {
			return nil, permErr("/vms/"+strconv.Itoa(b.VMID), "VM.Backup")
		}
	}
	t := s.startTaskID(node, "imgdel", strconv.Itoa(b.VMID)+"@"+sid, rc.user(), -1, nil, func(c *Cluster, log *[]string) string {
		if b.Protected {
			return fmt.Sprintf("cannot remove protected volume '%s' on '%s'", volname, sid)
		}
		*log = append(*log, "Removed volume '"+sid+":"+volname+"'")
		st.Backups = slices.DeleteFunc(st.Backups, func(x *Backup) bool { return x == b })
		return ""
	})
	return t.UPID, nil
}

// BackupJob is one scheduled vzdump job (jobs.cfg, "vzdump: <id>").
type BackupJob struct {
	ID       string
	Disabled bool
	Schedule string // e.g. "sun 01:00"
	Storage  string
	Mode     string
	// Selection: VMIDs (comma list), All (with Exclude), or Pool; Node
	// limits it to guests on that node.
	VMIDs   string
	All     bool
	Exclude string
	Pool    string
	Node    string
	// NextRun is the epoch Proxmox would answer as next-run (computed
	// from now in real PVE; fixed here).
	NextRun int64
}

// handleBackupJobs is GET /cluster/backup (mgr API2/Backup.pm index):
// the jobs with their id injected and next-run, enabled 1/0.
func handleBackupJobs(rc *reqCtx) (any, *apiError) {
	out := []map[string]any{}
	for _, j := range rc.s.cluster.BackupJobs {
		e := map[string]any{"id": j.ID, "type": "vzdump", "enabled": b2i(!j.Disabled), "schedule": j.Schedule}
		for k, v := range map[string]string{"storage": j.Storage, "mode": j.Mode, "vmid": j.VMIDs, "exclude": j.Exclude, "pool": j.Pool, "node": j.Node} {
			if v != "" {
				e[k] = v
			}
		}
		if j.All {
			e["all"] = 1
		}
		if j.NextRun > 0 && !j.Disabled {
			e["next-run"] = j.NextRun
		}
		out = append(out, e)
	}
	return out, nil
}
