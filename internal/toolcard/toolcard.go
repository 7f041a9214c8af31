package toolcard

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/proxmoxsafe/proxmox-safe-mcp/mcpserver"
)

// ClassName is the tool's class as listings show it: "read" for a read.
func ClassName(t mcpserver.ToolInfo) string {
	if t.Class == "" {
		return "read"
	}
	return string(t.Class)
}

// Listing is one tool in `tools --json`: what a script needs to call
// it.
type Listing struct {
	Name           string              `json:"name"`
	Title          string              `json:"title"`
	Class          string              `json:"class"`
	Summary        string              `json:"summary"`
	Description    string              `json:"description"`
	ApprovalFormat string              `json:"approval_format,omitempty"`
	Privileges     []string            `json:"privileges"`
	Annotations    mcp.ToolAnnotations `json:"annotations"`
	InputSchema    *jsonschema.Schema  `json:"input_schema"`
	OutputSchema   *jsonschema.Schema  `json:"output_schema"`
}

// ListingOf is t as `tools --json` lists it.
func ListingOf(t mcpserver.ToolInfo) Listing {
	return Listing{
		Name: t.Name, Title: t.Title, Class: ClassName(t), Summary: t.Summary(), Description: t.Description,
		ApprovalFormat: t.ApprovalFormat, Privileges: t.Privileges, Annotations: t.Annotations,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
	}
}

// Print shows one tool for people: description, parameters with their
// type, whether required, constraints, then approval and privileges.
func Print(w io.Writer, t mcpserver.ToolInfo) {
	fmt.Fprintf(w, "%s (%s) — %s\n\n%s\n", t.Name, ClassName(t), t.Title, t.Description)
	fmt.Fprintln(w, "\nParameters:")
	props := t.InputSchema.PropertyOrder
	if len(props) == 0 {
		props = slices.Sorted(maps.Keys(t.InputSchema.Properties))
	}
	if len(props) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, name := range props {
		p := t.InputSchema.Properties[name]
		if p == nil {
			continue
		}
		req := "optional"
		if slices.Contains(t.InputSchema.Required, name) {
			req = "required"
		}
		fmt.Fprintf(w, "  %s (%s, %s)%s\n", name, schemaType(p), req, schemaLimits(p))
		if p.Description != "" {
			fmt.Fprintf(w, "      %s\n", p.Description)
		}
	}
	if t.ApprovalFormat != "" {
		fmt.Fprintf(w, "\nApproval phrase: %s\n", t.ApprovalFormat)
	}
	if len(t.Privileges) > 0 {
		fmt.Fprintf(w, "Proxmox privileges: %s\n", strings.Join(t.Privileges, "; "))
	}
	fmt.Fprintf(w, "\nExample (the required parameters; tools --json %s gives the JSON schemas):\n  proxmox-safe-mcp call %s '%s'\n", t.Name, t.Name, ExampleArgs(t.Name, t.InputSchema))
}

// exampleValues are example values of the parameters tools share, valid
// against the demo cluster (pve1 and its VM 100 exist there).
var exampleValues = map[string]any{
	"node": "pve1", "target": "pve2", "vmid": 100, "snapname": "before-upgrade",
	"storage": "local-lvm", "disk_storage": "local-lvm", "rootfs_storage": "local-lvm",
	"bridge": "vmbr0", "hostname": "demo1", "name": "demo1", "ip": "dhcp",
	"ostemplate": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
	"upid":       "UPID:pve1:00001234:00005678:65A0B1C2:qmstart:100:root@pam:",
	"path":       "/cluster/resources", "disk": "scsi0", "size": "+1G",
	// The demo cluster's backup of VM 100 (backup_restore, backup_delete).
	"archive": "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst",
	"volume":  "local:backup/vzdump-qemu-100-2026_01_01-00_00_00.vma.zst",
}

// exampleOptional are the optional parameters a tool's example needs
// anyway: a rule the schema cannot state (guest_config_set needs set or
// delete).
var exampleOptional = map[string]map[string]any{
	mcpserver.ToolGuestConfigSet: {"set": map[string]string{"cores": "2"}},
}

// ExampleArgs builds a JSON object of the schema's required parameters
// (and exampleOptional's) with a value each: the first of an enum, a known example, the default,
// the minimum of a number, false; in the schema's order. The command line
// is runnable as shown (a mutation then gives its approval phrase).
func ExampleArgs(tool string, s *jsonschema.Schema) string {
	if s == nil {
		return "{}"
	}
	order := s.PropertyOrder
	if len(order) == 0 {
		order = slices.Sorted(maps.Keys(s.Properties))
	}
	var b strings.Builder
	b.WriteByte('{')
	for _, name := range order {
		p := s.Properties[name]
		extra, optional := exampleOptional[tool][name]
		if p == nil || (!optional && !slices.Contains(s.Required, name)) {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		value := extra
		if !optional {
			value = exampleValue(name, p)
		}
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func exampleValue(name string, p *jsonschema.Schema) any {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0]
	case len(p.Examples) > 0:
		return p.Examples[0]
	case len(p.Default) > 0:
		return p.Default
	}
	if v, ok := exampleValues[name]; ok {
		return v
	}
	switch schemaType(p) {
	case "integer", "number":
		if p.Minimum != nil {
			return *p.Minimum
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "example"
}

func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	return strings.Join(s.Types, "|")
}

// schemaLimits renders enum, bounds, pattern and default in a few words.
func schemaLimits(s *jsonschema.Schema) string {
	var parts []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			vals[i] = fmt.Sprint(v)
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	if s.Minimum != nil {
		parts = append(parts, "min "+strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		parts = append(parts, "max "+strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	if s.MaxLength != nil {
		parts = append(parts, "at most "+strconv.Itoa(*s.MaxLength)+" characters")
	}
	if s.Pattern != "" {
		parts = append(parts, "pattern "+s.Pattern)
	}
	if len(s.Default) > 0 {
		parts = append(parts, "default "+string(s.Default))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// Nearest is the tool name closest to name (a typo, a missing or extra
// letter, another server's name), or "" when none is close.
func Nearest(name string, tools []mcpserver.ToolInfo) string {
	best, bestDist := "", len(name)/3+1
	if bestDist < 2 {
		bestDist = 2
	}
	bestDist++ // a distance below this counts as close
	for _, t := range tools {
		if d := editDistance(strings.ToLower(name), t.Name); d < bestDist {
			best, bestDist = t.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
