package proxmoxtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// ptype is a JSON-schema type of a PVE API parameter.
type ptype int

const (
	tString ptype = iota
	tInteger
	tBoolean
	tNumber
	// tArray is a list parameter (vzdump's exclude-path); the fake takes
	// it as one form value and does not check its items.
	tArray
)

func (t ptype) String() string {
	return [...]string{"string", "integer", "boolean", "number", "array"}[t]
}

// param is one parameter of an endpoint, hand-copied from the PVE 9.1 API
// schema (schema_test.go checks the names against the schema file). Only the
// checks PVE would actually run on our routes are modelled.
type param struct {
	name     string
	typ      ptype
	format   string // pve-node, pve-vmid, pve-configid, pve-storage-id, or "" / unchecked formats
	enum     []string
	pattern  *regexp.Regexp
	min, max *int64
	maxLen   int
	optional bool
	// since is the first pve-manager version whose schema has the
	// parameter; older clusters refuse it as an unknown property, like
	// any parameter their schema lacks. Zero: every version. Only the
	// schema snapshots 7.4, 8.4 and 9.1 are known, so a parameter missing
	// from 8.4 gets 9.0.0 and one missing from 7.4 gets 8.0.0 (the release
	// that added it may be later).
	since [3]int
	// until, when set, is the first pve-manager version whose schema no
	// longer has the parameter (vzdump's notification-policy, gone in
	// 9.0); that version and later refuse it as unknown.
	until [3]int
	// enums, when set, is the enumeration by version, oldest first: the
	// cluster's version gets the last entry whose since it reaches (same
	// convention as since), and enum holds the newest (see pEnumByVersion).
	enums []enumAt
}

// enumAt is an enumeration as of one pve-manager version.
type enumAt struct {
	since  [3]int
	values []string
}

// at returns p with since set: a parameter new in that version.
func (p param) at(major, minor, patch int) param {
	p.since = [3]int{major, minor, patch}
	return p
}

// paramsOf lists the parameters of specs that cluster c's version has,
// each with the enumeration of that version.
func paramsOf(c *Cluster, specs []param) []param {
	out := make([]param, 0, len(specs))
	for _, p := range specs {
		if !c.versionAtLeast(p.since[0], p.since[1], p.since[2]) {
			continue
		}
		if p.until != [3]int{} && c.versionAtLeast(p.until[0], p.until[1], p.until[2]) {
			continue
		}
		for _, e := range p.enums {
			if c.versionAtLeast(e.since[0], e.since[1], e.since[2]) {
				p.enum = e.values
			}
		}
		out = append(out, p)
	}
	return out
}

func i64(v int64) *int64 { return &v }

// Constructors for the parameter shapes our routes use.
func pNode() param { return param{name: "node", typ: tString, format: "pve-node"} }
func pVMID() param {
	return param{name: "vmid", typ: tInteger, format: "pve-vmid", min: i64(100), max: i64(999999999)}
}
func pBool(name string) param { return param{name: name, typ: tBoolean, optional: true} }
func pInt(name string, min *int64) param {
	return param{name: name, typ: tInteger, min: min, optional: true}
}
func pStr(name string) param { return param{name: name, typ: tString, optional: true} }
func pEnum(name string, vals ...string) param {
	return param{name: name, typ: tString, enum: vals, optional: true}
}

// pEnumByVersion is an optional enumerated parameter whose values changed
// between releases: byVersion oldest first, the first one since version 0.
func pEnumByVersion(name string, byVersion ...enumAt) param {
	return param{name: name, typ: tString, enum: byVersion[len(byVersion)-1].values, optional: true, enums: byVersion}
}

// Named formats of pve-common JSONSchema.pm that our routes use.
var (
	nodeRE     = lazyre.New(`^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$`)
	vmidRE     = lazyre.New(`^[1-9][0-9]{2,8}$`)
	configIDRE = lazyre.New(`(?i)^[a-z][a-z0-9_-]+$`)
	storageRE  = lazyre.New(`(?i)^[a-z][a-z0-9\-_.]*[a-z0-9]$`)
	realmRE    = lazyre.New(`^[A-Za-z][A-Za-z0-9.\-_]+$`)
	tagRE      = lazyre.New(`(?i)^[a-z0-9_][a-z0-9_\-+.]*$`)
	dnsNameRE  = lazyre.New(`^([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$`)
	integerRE  = lazyre.New(`^-?\d+$`)
	numberRE   = lazyre.New(`^-?\d+(\.\d+)?([eE][-+]?\d+)?$`)
)

// checkFormat returns the error PVE's format verifier dies with, or "".
func checkFormat(format, v string) string {
	switch format {
	case "pve-node":
		if !nodeRE.MatchString(v) {
			return "invalid format - value does not look like a valid node name\n"
		}
	case "pve-vmid":
		if !vmidRE.MatchString(v) {
			return "invalid format - value does not look like a valid VM ID\n"
		}
	case "pve-configid":
		if !configIDRE.MatchString(v) {
			return fmt.Sprintf("invalid format - invalid configuration ID '%s'\n", v)
		}
	case "pve-realm":
		if !realmRE.MatchString(v) {
			return fmt.Sprintf("value '%s' does not look like a valid realm\n", v)
		}
	case "dns-name":
		if !dnsNameRE.MatchString(v) {
			return "invalid format - value does not look like a valid DNS name\n"
		}
	case "pve-configid-list":
		for _, id := range splitList(v) {
			if !configIDRE.MatchString(id) {
				return fmt.Sprintf("invalid format - invalid configuration ID '%s'\n", id)
			}
		}
	case "pve-tag-list":
		for _, tag := range splitList(v) {
			if !tagRE.MatchString(tag) {
				return fmt.Sprintf("invalid format - invalid tag '%s'\n", tag)
			}
		}
	case "pve-storage-id":
		if !storageRE.MatchString(v) {
			return fmt.Sprintf("invalid format - storage ID '%s' contains illegal characters\n", v)
		}
	}
	return ""
}

// validate mirrors PVE::JSONSchema::validate for a flat parameter object:
// unknown properties, missing required ones, then per property the type,
// format, length, range, enum and pattern checks, first failure wins.
func validate(specs []param, values map[string]string) map[string]string {
	errs := map[string]string{}
	known := make(map[string]*param, len(specs))
	for i := range specs {
		known[specs[i].name] = &specs[i]
	}
	for k, v := range values {
		if known[k] != nil && !strings.HasSuffix(k, "[n]") { // only the schema spells scsi[n]
			continue
		}
		if p := indexedParam(known, k); p != nil {
			if msg := checkValue(*p, v); msg != "" {
				errs[k] = msg
			}
			continue
		}
		errs[k] = "property is not defined in schema and the schema does not allow additional properties"
	}
	for _, p := range specs {
		if strings.HasSuffix(p.name, "[n]") {
			continue // checked above under its real names
		}
		v, ok := values[p.name]
		if !ok {
			if !p.optional {
				errs[p.name] = "property is missing and it is not optional"
			}
			continue
		}
		if msg := checkValue(p, v); msg != "" {
			errs[p.name] = msg
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// indexMax is the largest n of the schema's indexed parameters
// (qemu-server's and pve-container's MAX_* constants): scsi0 … scsi30.
var indexMax = map[string]int{
	"ide": 3, "sata": 5, "scsi": 30, "virtio": 15, "net": 31, "mp": 255, "unused": 255, "hostpci": 15,
	"usb": 14, "serial": 3, "parallel": 2, "numa": 7, "ipconfig": 31, "dev": 127, "virtiofs": 9,
}

// indexedParam finds the "name[n]" parameter a key like "scsi0" stands
// for, or nil.
func indexedParam(known map[string]*param, k string) *param {
	base := strings.TrimRight(k, "0123456789")
	if base == k || base == "" {
		return nil
	}
	n, err := strconv.Atoi(k[len(base):])
	if err != nil || n > indexMax[base] || (len(k)-len(base) > 1 && k[len(base)] == '0') {
		return nil
	}
	return known[base+"[n]"]
}

func checkValue(p param, v string) string {
	switch p.typ {
	case tBoolean:
		// Form values must be exactly 0 or 1; JSON true/false were turned
		// into "1"/"0" when the body was decoded.
		if v != "0" && v != "1" {
			return fmt.Sprintf("type check ('boolean') failed - got '%s'", v)
		}
	case tInteger:
		if !integerRE.MatchString(v) {
			return fmt.Sprintf("type check ('integer') failed - got '%s'", v)
		}
	case tNumber:
		if !numberRE.MatchString(v) {
			return fmt.Sprintf("type check ('number') failed - got '%s'", v)
		}
	}
	if msg := checkFormat(p.format, v); msg != "" {
		return msg
	}
	if p.maxLen > 0 && len(v) > p.maxLen {
		return fmt.Sprintf("value may only be %d characters long", p.maxLen)
	}
	if p.typ == tInteger || p.typ == tNumber {
		n, err := strconv.ParseFloat(v, 64)
		if err == nil && p.min != nil && n < float64(*p.min) {
			return fmt.Sprintf("value must have a minimum value of %d", *p.min)
		}
		if err == nil && p.max != nil && n > float64(*p.max) {
			return fmt.Sprintf("value must have a maximum value of %d", *p.max)
		}
	}
	if len(p.enum) > 0 {
		found := false
		for _, e := range p.enum {
			found = found || e == v
		}
		if !found {
			return fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", v, strings.Join(p.enum, ", "))
		}
	}
	if p.pattern != nil && !p.pattern.MatchString(v) {
		return "value does not match the regex pattern"
	}
	return ""
}

// splitList is PVE::Tools::split_list: items separated by commas,
// semicolons or white space; empty items are dropped.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == 0 })
}
