package mcpserver

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Input schemas are derived, not written: go-sdk infers each tool's schema
// from its input type (the library's input struct, embedded), the
// descriptions come from the library's jsonschema tags, and constrain below
// translates each field's validate tag into JSON Schema keywords. The
// library validates again; TestSchemaMatchesValidator proves over a corpus
// of edge values that the two accept the same values, apart from the rules
// listed in libraryOnlyTags and formatTags.
//
// A served schema states types, enums, required properties, numeric bounds
// and lengths, not the patterns of Proxmox's formats (formatTags): every
// listing pays for a pattern's bytes in every tool that has the parameter
// (a node name's in 25 tools, an IPv4 address's 200 bytes), and it tells a
// model nothing the parameter's name and description do not. The library
// checks each format (and a VMID's range) before anything is sent, and
// refuses in the same "field: problem" words.

// printableASCIIPattern is validator's printascii (0x20 to 0x7e).
const printableASCIIPattern = `^[ -~]*$`

// libraryOnlyTags are validate tags (and struct-level rules) a per-property
// JSON Schema cannot express; only the library enforces them, before any
// request: free-text hygiene (pve_text), snapshot names reserved per guest
// type, vmstate for qemu only, the UPID's node matching node.
var libraryOnlyTags = map[string]bool{
	"pve_text": true, "pve_snapname_reserved": true, "qemu_only": true, "upid_node": true,
	// Provision: SSH public keys line by line; storage only for a full
	// clone; a gateway only with a static IP.
	"pve_sshkeys": true, "linked_storage": true, "gw_static_only": true,
	// MigrateGuestInput's cross-field rules (validateMigrate).
	"lxc_only": true, "not_source": true, "lxc_no_live": true, "restart_only": true,
	// MetricsHistoryInput: a guest is type and vmid together, a storage neither.
	"metrics_guest": true, "metrics_storage": true,
}

// formatTags are the validate tags of Proxmox's formats (and VMIDs): the
// library checks them, and refuses an empty one where it is required; the
// served schema states only the type.
var formatTags = map[string]bool{
	"pve_node": true, "pve_snapname": true, "pve_tag": true, "pve_storage": true,
	"pve_upid": true, "pve_tasktype": true, "printascii": true, "pve_dnsname": true,
	"pve_poolid": true, "pve_bridge": true, "pve_isovolume": true,
	"pve_tmplvolume": true, "pve_ctip": true, "pve_ipv4": true, "pve_vmid": true,
	"pve_backupnotes": true, "pve_backupvolume": true,
}

func ptr[T any](v T) *T { return &v }

// constrain applies the validate tags of t's fields (and of the fields of
// structs it embeds) to the properties of s. It panics on a tag it does not
// know: every tool's schema is built at start-up and in tests, so a new
// tag cannot slip through untranslated.
func constrain(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, f := range reflect.VisibleFields(t) {
		tag, ok := f.Tag.Lookup("validate")
		if !ok || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := s.Properties[name]
		if p == nil || name == "" || name == "-" {
			continue
		}
		for rule := range strings.SplitSeq(tag, ",") {
			applyRule(p, f.Type.Kind(), rule)
		}
	}
	// A mutation input's approval is in its embedded Controls, one type
	// for every input: the input says how long its approval may be.
	if _, ok := t.FieldByName("Controls"); ok {
		if p := s.Properties["approval"]; p != nil {
			n := proxmoxsafe.MaxApprovalLenOf(reflect.Zero(t).Interface())
			p.MaxLength = &n
		}
	}
}

func applyRule(p *jsonschema.Schema, kind reflect.Kind, rule string) {
	key, param, _ := strings.Cut(rule, "=")
	if formatTags[key] {
		return
	}
	switch key {
	case "required", "omitempty":
		// Required-ness comes from the json tag (omitempty = optional);
		// an empty value fails the field's other constraints.
	case "oneof":
		p.Enum = nil
		for v := range strings.FieldsSeq(param) {
			p.Enum = append(p.Enum, v)
		}
	case "max", "min":
		n, err := strconv.Atoi(param)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: validate rule %q: %v", rule, err))
		}
		switch {
		case kind == reflect.Map && key == "max":
			p.MaxProperties = ptr(n)
		case kind == reflect.Slice && key == "max":
			p.MaxItems = ptr(n)
		case kind == reflect.String && key == "max":
			p.MaxLength = ptr(n)
		case kind == reflect.String:
			p.MinLength = ptr(n)
		case key == "max":
			p.Maximum = ptr(float64(n))
		default:
			p.Minimum = ptr(float64(n))
		}
	default:
		if !libraryOnlyTags[key] {
			panic(fmt.Sprintf("mcpserver: no JSON Schema translation for validate rule %q", rule))
		}
	}
}
