package proxmoxtest

import (
	"fmt"
	"maps"
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
// and Datastore.AllocateSpace on the storage. The selection (a vmid list,
// a pool, all with exclusions) resolves as vzdump resolves it
// (vzdumpSelection); one with no guest on this node answers "OK" and
// starts nothing, except all. The worker (a vzdump
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
		{method: "GET", path: "/nodes/{node}/vzdump/extractconfig", proxy: true, params: []param{pNode(), {name: "volume", typ: tString}},
			handle: handleExtractConfig},
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
	s := rc.s
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
	local, orphans, aerr := vzdumpSelection(rc)
	if aerr != nil {
		return nil, aerr
	}
	storageID := p["storage"]
	if storageID == "" {
		storageID = "local"
	}
	if !hasPriv(rc.token, "/storage/"+storageID, "Datastore.AllocateSpace") {
		return nil, permErr("/storage/"+storageID, "Datastore.AllocateSpace")
	}
	if len(local)+len(orphans) == 0 && p["all"] != "1" && p["exclude"] == "" {
		// Every selected guest lives on another node: nothing to do here
		// (with all, the node runs an empty job).
		return "OK", nil
	}
	ids := make([]int, 0, len(local)+len(orphans))
	for _, g := range local {
		ids = append(ids, g.VMID)
	}
	ids = append(ids, orphans...)
	id := ""
	if len(ids) == 1 {
		id = strconv.Itoa(ids[0])
	}
	mode := cmpOr(p["mode"], "snapshot")
	compress := cmpOr(p["compress"], "0")
	log := []string{"INFO: starting new backup job: " + vzdumpCommandLine(p)}
	if skipped := vzdumpSkipped(rc, ids); skipped != "" {
		log = append(log, "INFO: skip external VMs: "+skipped)
	}
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
			now := time.Now().UTC()
			if g == nil {
				// A guest the job names that no longer exists fails
				// visibly (mgr API2/VZDump.pm: orphaned VMIDs).
				failed = true
				*log = append(*log, fmt.Sprintf("ERROR: Backup of VM %d failed - unable to find VM '%d'", vmid, vmid))
				continue
			}
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

// vzdumpSelection resolves a run's selection as vzdump does (mgr
// VZDump.pm get_included_guests): a pool's members, else the vmid list,
// else with all (which exclude implies) every guest of the cluster but
// the excluded ones; of those, the guests on this node. A listed guest
// that does not exist is kept (orphans) and fails in the task, as
// Proxmox's "include IDs for deleted guests, and visibly fail later". A
// vmid list or pool needs VM.Backup on each guest; all skips the guests
// the token may not back up, silently (the worker's check with noerr).
func vzdumpSelection(rc *reqCtx) (local []*Guest, orphans []int, aerr *apiError) {
	c, p, nodeName := rc.s.cluster, rc.params, rc.params["node"]
	all := p["all"] == "1" || (p["exclude"] != "" && p["pool"] == "")
	var ids []int
	switch {
	case p["pool"] != "":
		for _, g := range c.Guests {
			if g.Pool == p["pool"] {
				ids = append(ids, g.VMID)
			}
		}
	case p["vmid"] != "":
		for id := range strings.SplitSeq(p["vmid"], ",") {
			id = strings.TrimSpace(id)
			vmid, err := strconv.Atoi(id)
			if err != nil || !vmidRE.MatchString(id) {
				return nil, nil, paramErr(map[string]string{"vmid": "invalid format - value does not look like a valid VM ID\n"})
			}
			ids = append(ids, vmid)
		}
	case all:
		var excluded []string
		for x := range strings.SplitSeq(p["exclude"], ",") {
			excluded = append(excluded, strings.TrimSpace(x))
		}
		for _, g := range c.Guests {
			if !slices.Contains(excluded, strconv.Itoa(g.VMID)) {
				ids = append(ids, g.VMID)
			}
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, vmid := range ids {
		if !hasPriv(rc.token, "/vms/"+strconv.Itoa(vmid), "VM.Backup") {
			if all {
				continue
			}
			return nil, nil, permErr("/vms/"+strconv.Itoa(vmid), "VM.Backup")
		}
		g := c.guest(vmid)
		switch {
		case g == nil:
			orphans = append(orphans, vmid)
		case g.Node == nodeName:
			local = append(local, g)
		}
	}
	return local, orphans, nil
}

// vzdumpSkipped lists the selected guests on other nodes, as the task log
// says ("skip external VMs: 101, 102").
func vzdumpSkipped(rc *reqCtx, local []int) string {
	p := rc.params
	if p["vmid"] == "" && p["pool"] == "" && p["all"] != "1" && p["exclude"] == "" {
		return ""
	}
	var out []string
	for _, g := range rc.s.cluster.Guests {
		if slices.Contains(local, g.VMID) || g.Node == p["node"] {
			continue
		}
		sel := false
		switch {
		case p["pool"] != "":
			sel = g.Pool == p["pool"]
		case p["vmid"] != "":
			sel = slices.Contains(strings.Split(p["vmid"], ","), strconv.Itoa(g.VMID))
		default:
			sel = !slices.Contains(strings.Split(p["exclude"], ","), strconv.Itoa(g.VMID))
		}
		if sel {
			out = append(out, strconv.Itoa(g.VMID))
		}
	}
	return strings.Join(out, ", ")
}

// vzdumpCommandLine is the command line the first log line quotes
// (pve-guest-common VZDump/Common.pm command_line): "vzdump", the vmid
// list, then every other parameter as "--key value", shell-quoted, but
// never job-id (so a task never says which job ran it). Perl's hash order
// is random; the fake sorts.
func vzdumpCommandLine(p map[string]string) string {
	cmd := "vzdump"
	if v := p["vmid"]; v != "" {
		cmd += " " + strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }), " ")
	}
	keys := slices.Sorted(maps.Keys(p))
	for _, k := range keys {
		switch k {
		case "id", "vmid", "starttime", "dow", "stdout", "enabled", "job-id":
			continue
		}
		if v := p[k]; v != "" {
			cmd += " --" + k + " " + shellQuote(v)
		}
	}
	return cmd
}

// shellQuote quotes a value as PVE::Tools::shellquote does: as it is
// when it holds only safe characters, else in single quotes.
func shellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,/:=@+-") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'"'"'`) + "'"
}
