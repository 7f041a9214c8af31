package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// edgeStrings is the corpus for string properties: boundaries of every
// pattern and length, reserved names, unicode, control characters, empty.
func edgeStrings() []string {
	out := []string{
		"", " ", "a", "A", "1", "_", "-", ".", "ab", "a-", "-a", "a_b", "a.b", "a+b", "a b", "a/b", "../x", "a:b",
		"pve1", "PVE-1", "pve_1", "node.example", "local", "local-lvm", "l", "1abc", "ab-", "a.b-c", "_x", "+x",
		"qmstart", "move_volume", "1x", "vzdump", "current", "Current", "CURRENT", "pending", "Pending", "currentx",
		"qemu", "lxc", "QEMU", "qemu ", "start", "shutdown", "reboot", "stop", "Stop", "running", "stopped", "unknown",
		"ä", "日本", "a\u200bb", "a\u202eb", "a\x1b[2J", "a\nb", "a\tb", "\x00", "~", "\x7f", "é",
		"UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:",
		"UPID:pve2:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:",
		"UPID:pve1:00001234:123456789:5FBE5E6D:vzdump::root@pam!tok:",
		"UPID:pve1:0000123:00005678:5FBE5E6D:qmstart:100:root@pam:",
		"UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:root@pam",
		"UPID:-pve:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:",
		"UPID:pve1:00001234:00005678:5FBE5E6D:qm/start:100:root@pam:",
		"UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:1 00:root@pam:",
		"APPROVE stop pve1/qemu/100",
	}
	for _, n := range []int{2, 39, 40, 41, 62, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025} {
		out = append(out, strings.Repeat("a", n), "a"+strings.Repeat("9", n-1), strings.Repeat("ä", n))
	}
	return out
}

// edgeInts is the corpus for integer properties: VMID bounds, every limit
// and its neighbours, zero and negatives.
func edgeInts() []int {
	out := []int{-1, 0, 1, 2, 99, 100, 101, proxmoxsafe.MaxVMID - 1, proxmoxsafe.MaxVMID, proxmoxsafe.MaxVMID + 1}
	for _, n := range []int{proxmoxsafe.MaxListLimit, proxmoxsafe.MaxTaskListLimit, proxmoxsafe.MaxTaskLogLines, proxmoxsafe.MaxTaskListStart} {
		out = append(out, n-1, n, n+1)
	}
	return out
}

// TestSchemaMatchesValidator is the differential test between every tool's
// input schema (derived from the validate tags) and the library's
// validator: over a corpus of edge values, one property at a time, a value
// the schema accepts is one the library accepts, unless the refusal is a
// rule a per-property schema cannot express (libraryOnlyTags); and a value
// the library accepts is one the schema accepts, unless it is the zero
// value of an optional property (absent and zero mean the same, and the
// schema asks clients to leave it out).
func TestSchemaMatchesValidator(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, d := range allTools() {
		info := d.build()
		rs, err := info.InputSchema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", info.Name, err)
		}
		base := toolCases[info.Name].valid
		if base == nil {
			if len(info.InputSchema.Properties) > 0 {
				t.Errorf("%s takes arguments but its toolCases row has no valid arguments", info.Name)
			}
			continue
		}
		if s, l := schemaAccepts(rs, base), libraryAccepts(t, d.input, base); !s || l != nil {
			t.Fatalf("%s: base arguments %v: schema %v, library %v", info.Name, base, s, l)
		}
		for name, prop := range info.InputSchema.Properties {
			if name == "wait" || name == "timeout_seconds" {
				continue // the adapter's own parameters, not the library's
			}
			optional := !slices.Contains(info.InputSchema.Required, name)
			for _, v := range corpus(prop) {
				args := maps(base, name, v)
				schemaOK := schemaAccepts(rs, args)
				libErr := libraryAccepts(t, d.input, args)
				checked++
				switch {
				case schemaOK && libErr != nil:
					if rules := failedRules(libErr); !onlyLibraryRules(rules) && !(hasFormat(d.input, name) && slices.Equal(rules, []string{"required"})) {
						t.Errorf("%s %s=%q: the schema accepts it, the library refuses it (%v, rules %v)", info.Name, name, v, libErr, rules)
					}
				case !schemaOK && libErr == nil:
					if !(optional && reflect.ValueOf(v).IsZero()) {
						t.Errorf("%s %s=%q: the library accepts it, the schema refuses it", info.Name, name, v)
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d cases checked", checked)
	}
}

func corpus(prop *jsonschema.Schema) []any {
	var out []any
	switch prop.Type {
	case "string":
		for _, s := range edgeStrings() {
			out = append(out, s)
		}
	case "integer":
		for _, n := range edgeInts() {
			out = append(out, n)
		}
	case "boolean":
		out = append(out, true, false)
	}
	return out
}

func schemaAccepts(rs *jsonschema.Resolved, args map[string]any) bool {
	var v any
	raw, _ := json.Marshal(args)
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(err)
	}
	return rs.Validate(v) == nil
}

// libraryAccepts decodes args into the tool's input type, as go-sdk does,
// and runs the library's validator on it.
func libraryAccepts(t *testing.T, typ reflect.Type, args map[string]any) error {
	t.Helper()
	raw, _ := json.Marshal(args)
	in := reflect.New(typ)
	if err := json.Unmarshal(raw, in.Interface()); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return proxmoxsafe.Validate(in.Elem().Interface())
}

func failedRules(err error) []string {
	var ve *proxmoxsafe.ValidationError
	if !errors.As(err, &ve) {
		return []string{"<not a validation error: " + err.Error() + ">"}
	}
	var out []string
	for _, f := range ve.Fields {
		out = append(out, f.Rule)
	}
	return out
}

// hasFormat reports whether the input's parameter name has a format tag
// (formatTags): the library refuses it empty where it is required, and
// the schema states only its type.
func hasFormat(typ reflect.Type, name string) bool {
	for _, f := range reflect.VisibleFields(typ) {
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			for rule := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
				if formatTags[rule] {
					return true
				}
			}
		}
	}
	return false
}

func onlyLibraryRules(rules []string) bool {
	for _, r := range rules {
		if !libraryOnlyTags[r] && !formatTags[r] {
			return false
		}
	}
	return len(rules) > 0
}

// TestConstrainRefusesUnknownRules: a validate rule without a translation
// stops the build of the schema instead of being dropped silently.
func TestConstrainRefusesUnknownRules(t *testing.T) {
	t.Parallel()
	type in struct {
		X string `json:"x" validate:"required,email"`
	}
	s, err := jsonschema.For[in](nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("constrain accepted an unknown rule")
		}
	}()
	constrain(s, reflect.TypeFor[in]())
}

// selfDescribed are the parameters whose name, type (an enum) and the
// tool's own description say what they are; the mutation controls (plan,
// wait, timeout_seconds) and a new guest's VMID (newid) are described
// once, in the server's instructions. Every other parameter must have a
// description, and these may have one where a tool gives them another
// meaning (a clone's source guest, a restore's new VMID).
var selfDescribed = []string{
	"node", "type", "vmid", "plan", "wait", "timeout_seconds", "upid", "method",
	"description", "pool", "name", "hostname", "disk_storage", "rootfs_storage",
	"force", "linked", "todisk", "newid", "target", "storage", "id", "tag",
	"status", "loopback", "errors_only", "start", "apply", "snapname", "vmstate",
	"with_local_disks", "keep_mac_addresses", "mode", "compress", "cores",
	"sockets", "ostype", "net_model", "bridge", "disk_size_gib", "rootfs_size_gib",
	"min_severity", "timeframe", "cf", "online", "restart",
}

// TestEveryInputFieldIsDescribed: descriptions live once, on the library
// structs, and every parameter of every tool that is not selfDescribed
// has one.
func TestEveryInputFieldIsDescribed(t *testing.T) {
	t.Parallel()
	for _, ti := range Tools(nil, nil) {
		for name, p := range ti.InputSchema.Properties {
			if strings.TrimSpace(p.Description) == "" && !slices.Contains(selfDescribed, name) {
				t.Errorf("%s: parameter %s has no description", ti.Name, name)
			}
		}
	}
}
