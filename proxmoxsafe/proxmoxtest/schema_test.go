package proxmoxtest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// schemaEndpoint is one endpoint of testdata/pve-schema.json (see
// internal/pvefacts).
type schemaEndpoint struct {
	Method     string
	Path       string
	Parameters map[string]struct {
		Type      string
		Optional  bool
		Enum      []string
		Minimum   *float64
		Maximum   *float64
		MaxLength int
	}
	// Returns lists the property names the endpoint's returns declare; nil
	// when it declares none.
	Returns []string
	// ReturnsType is the JSON type the returns declare ("string", "null",
	// "object", ...).
	ReturnsType string
}

// loadSchema reads the facts extracted from the PVE 9.1 schema. Missing
// data fails the test: a check that silently skips checks nothing.
func loadSchema(t *testing.T) map[string]schemaEndpoint {
	t.Helper()
	return loadSchemaFile(t, "pve-schema.json")
}

// loadSchemaFile reads one of the testdata/pve-schema*.json files.
func loadSchemaFile(t *testing.T, name string) map[string]schemaEndpoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("schema facts missing (%v): run go generate ./proxmoxsafe/proxmoxtest", err)
	}
	var doc struct{ Endpoints []schemaEndpoint }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Endpoints) == 0 {
		t.Fatalf("testdata/%s lists no endpoints", name)
	}
	out := map[string]schemaEndpoint{}
	for _, e := range doc.Endpoints {
		out[e.Method+" "+e.Path] = e
	}
	return out
}

func sameBound(ours *int64, theirs *float64) bool {
	if ours == nil || theirs == nil {
		return ours == nil && theirs == nil
	}
	return float64(*ours) == *theirs
}

func fmtBound(b *int64) string {
	if b == nil {
		return "-"
	}
	return strconv.FormatInt(*b, 10)
}

func fmtFloat(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// TestRoutesMatchSchema: every route we serve exists in the PVE 9.1 schema
// with the same method, and accepts exactly the schema's parameters with the
// same types, optionality, enums, ranges and length limits.
func TestRoutesMatchSchema(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	c := &Cluster{Version: DefaultVersion}
	for _, rt := range routes() {
		e, ok := schema[rt.method+" "+rt.path]
		if !ok {
			t.Errorf("%s %s is not in the schema", rt.method, rt.path)
			continue
		}
		var ours, theirs []string
		for _, p := range paramsOf(c, rt.params) {
			ours = append(ours, p.name)
			sp, ok := e.Parameters[p.name]
			if !ok {
				continue
			}
			if sp.Type != p.typ.String() {
				t.Errorf("%s %s: %s has type %s, schema %s", rt.method, rt.path, p.name, p.typ, sp.Type)
			}
			if sp.Optional != p.optional {
				t.Errorf("%s %s: %s optional=%v, schema %v", rt.method, rt.path, p.name, p.optional, sp.Optional)
			}
			if !slices.Equal(slices.Sorted(slices.Values(p.enum)), slices.Sorted(slices.Values(sp.Enum))) {
				t.Errorf("%s %s: %s enum %v, schema %v", rt.method, rt.path, p.name, p.enum, sp.Enum)
			}
			if !sameBound(p.min, sp.Minimum) || !sameBound(p.max, sp.Maximum) {
				t.Errorf("%s %s: %s range %s..%s, schema %s..%s", rt.method, rt.path, p.name,
					fmtBound(p.min), fmtBound(p.max), fmtFloat(sp.Minimum), fmtFloat(sp.Maximum))
			}
			if p.maxLen != sp.MaxLength {
				t.Errorf("%s %s: %s maxLength %d, schema %d", rt.method, rt.path, p.name, p.maxLen, sp.MaxLength)
			}
		}
		for name := range e.Parameters {
			theirs = append(theirs, name)
		}
		sort.Strings(ours)
		sort.Strings(theirs)
		if !slices.Equal(ours, theirs) {
			t.Errorf("%s %s: parameters %v, schema %v", rt.method, rt.path, ours, theirs)
		}
	}
}

// TestRoutesMatchOlderSchemas: on a cluster of PVE 8.4 or 7.4 a route
// accepts exactly the parameters that version's schema declares (a newer
// parameter is refused as an unknown property, as the older server does),
// with that version's enumerations,
// and a route the version's schema lacks answers 501 — for every route the
// fake serves whose endpoint the subset covers (the 7.4 subset lacks
// create, destroy and GET /access/ticket; the 8.4 subset's
// requested_but_not_in_schema says which endpoints 8.4 does not have).
func TestRoutesMatchOlderSchemas(t *testing.T) {
	t.Parallel()
	for _, v := range []struct{ release, version string }{{"8.4", "8.4.1"}, {"7.4", "7.4-16"}} {
		schema := loadSchemaFile(t, "pve-schema-"+v.release+".json")
		c := &Cluster{Version: v.version}
		checked := 0
		for _, rt := range routes() {
			served := c.versionAtLeast(rt.since[0], rt.since[1], rt.since[2])
			e, ok := schema[rt.method+" "+rt.path]
			if !ok {
				continue // not in the subset: the subset does not say
			}
			if !served {
				t.Errorf("%s: %s %s is in the schema but answers 501", v.release, rt.method, rt.path)
				continue
			}
			checked++
			var ours, theirs []string
			for _, p := range paramsOf(c, rt.params) {
				ours = append(ours, p.name)
				if sp, ok := e.Parameters[p.name]; ok && !slices.Equal(slices.Sorted(slices.Values(p.enum)), slices.Sorted(slices.Values(sp.Enum))) {
					t.Errorf("%s: %s %s: %s enum %v, schema %v", v.release, rt.method, rt.path, p.name, p.enum, sp.Enum)
				}
			}
			for name := range e.Parameters {
				theirs = append(theirs, name)
			}
			sort.Strings(ours)
			sort.Strings(theirs)
			if !slices.Equal(ours, theirs) {
				t.Errorf("%s: %s %s: parameters %v, schema %v", v.release, rt.method, rt.path, ours, theirs)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no route checked", v.release)
		}
	}
}

// undeclaredButReal lists keys real PVE returns (seen in the recordings or
// the source) that the schema's returns do not declare.
var undeclaredButReal = map[string][]string{
	"/nodes/{node}/status": {"uptime", "wait", "idle", "kversion", "swap", "ksm"}, // additionalProperties: 1
	"/nodes/{node}/qemu/{vmid}/status/current": {"disk", "balloon", "balloon_min", "ballooninfo", "blockstat", "freemem",
		"nics", "proxmox-support", "shares"}, // rec7 cluster4-qemu-status-current-running.json
	"/nodes/{node}/lxc/{vmid}/status/current": {"swap", "type", "pid"},           // rec7 lxc-status-current-template, rec6
	"/nodes/{node}/lxc":                       {"swap", "type", "pid"},           // rec7 cluster4-lxc-list.json
	"/nodes/{node}/qemu":                      {"disk"},                          // rec6 nodes-node-qemu.json
	"/nodes":                                  {"id", "type", "disk", "maxdisk"}, // rec7 cluster4-nodes.json
	"/nodes/{node}/tasks/{upid}/status":       {"tokenid"},                       // mgr Tasks.pm $convert_token_task
	"/nodes/{node}/tasks":                     {"tokenid"},
	"/nodes/{node}/qemu/{vmid}/snapshot":      {"running", "digest"}, // the "current" entry, rec7
	"/nodes/{node}/lxc/{vmid}/snapshot":       {"running", "digest"},
	"/nodes/{node}/qemu/{vmid}/config":        {"scsi0", "net0"}, // schema spells them scsi[n], net[n]
	"/nodes/{node}/lxc/{vmid}/config":         {"net0"},
}

// TestReturnsDeclared: every property our main GET endpoints return is one
// the schema's returns declares (or a documented real-world extra).
func TestReturnsDeclared(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	s := newDemo(t)
	up := upidOf(t, post(t, s, "/nodes/pve1/qemu/100/status/reboot", url.Values{}))
	upE := url.PathEscape(up)
	calls := map[string][]string{
		"/version":             {"/version"},
		"/cluster/status":      {"/cluster/status"},
		"/cluster/resources":   {"/cluster/resources"},
		"/nodes":               {"/nodes"},
		"/nodes/{node}/status": {"/nodes/pve1/status"},
		"/nodes/{node}/qemu":   {"/nodes/pve1/qemu?full=1", "/nodes/pve2/qemu"},
		"/nodes/{node}/lxc":    {"/nodes/pve1/lxc", "/nodes/pve3/lxc"},
		"/nodes/{node}/qemu/{vmid}/status/current": {"/nodes/pve1/qemu/100/status/current", "/nodes/pve1/qemu/101/status/current", "/nodes/pve1/qemu/102/status/current", "/nodes/pve2/qemu/105/status/current"},
		"/nodes/{node}/lxc/{vmid}/status/current":  {"/nodes/pve1/lxc/200/status/current", "/nodes/pve3/lxc/203/status/current"},
		"/nodes/{node}/qemu/{vmid}/snapshot":       {"/nodes/pve1/qemu/100/snapshot"},
		"/nodes/{node}/lxc/{vmid}/snapshot":        {"/nodes/pve2/lxc/204/snapshot"},
		"/nodes/{node}/qemu/{vmid}/config":         {"/nodes/pve1/qemu/100/config", "/nodes/pve2/qemu/105/config"},
		"/nodes/{node}/lxc/{vmid}/config":          {"/nodes/pve3/lxc/203/config"},
		"/nodes/{node}/qemu/{vmid}/pending":        {"/nodes/pve1/qemu/100/pending"},
		"/nodes/{node}/lxc/{vmid}/pending":         {"/nodes/pve3/lxc/203/pending"},
		"/nodes/{node}/tasks/{upid}/status":        {"/nodes/pve1/tasks/" + upE + "/status", "/nodes/pve1/tasks/" + upE + "/status"},
		"/nodes/{node}/tasks/{upid}/log":           {"/nodes/pve1/tasks/" + upE + "/log"},
		"/nodes/{node}/tasks":                      {"/nodes/pve1/tasks?source=all"},
	}
	for tmpl, paths := range calls {
		e, ok := schema["GET "+tmpl]
		if !ok {
			t.Errorf("GET %s not in schema", tmpl)
			continue
		}
		if e.Returns == nil {
			continue // the schema declares no properties: nothing to check
		}
		for _, p := range paths {
			a := get(t, s, p)
			var objs []map[string]any
			switch d := a.body["data"].(type) {
			case map[string]any:
				objs = append(objs, d)
			case []any:
				for _, x := range d {
					objs = append(objs, x.(map[string]any))
				}
			default:
				t.Errorf("GET %s: data %s", p, a.raw)
			}
			for _, o := range objs {
				for k := range o {
					if !slices.Contains(e.Returns, k) && !slices.Contains(undeclaredButReal[tmpl], k) {
						t.Errorf("GET %s returns %q, which the schema does not declare", p, k)
					}
				}
			}
		}
	}
}
