package mcpserver

import (
	"strconv"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/lazyre"
)

// go-sdk checks arguments against the input schema before a handler runs,
// and its messages are the schema library's ("validating root: validating
// /properties/timeout_seconds: maximum: 500/1 is greater than 120.000000").
// schemaFields rewrites them into the library's own form (field: problem,
// as proxmoxsafe.ValidationError says it), and never repeats the refused
// value. A message it does not recognise is kept, so nothing is lost.

var (
	// schemaPathRe finds the property path of a validation message.
	schemaPathRe = lazyre.New(`validating (/properties/[^:]+): (\w+): (.*)$`)
	requiredRe   = lazyre.New(`required: missing properties: \[(.*)\]`)
	additionalRe = lazyre.New(`unexpected additional properties \[(.*)\]`)
	quotedRe     = lazyre.New(`"((?:[^"\\]|\\.)*)"`)
	limitRe      = lazyre.New(`(?:greater|less) than ([0-9.eE+-]+)`)
	lengthRe     = lazyre.New(`(?:more|fewer) than (\d+)$`)
	typeRe       = lazyre.New(`want "(\w+)"`)
)

// patternProblems says in words what each pattern of the input schemas
// requires, in the library's wording (proxmoxsafe validate.go).
var patternProblems = map[string]string{
	proxmoxsafe.NodePattern:         "must be a Proxmox node name (letters, digits and '-', not starting or ending with '-', at most 63 characters)",
	proxmoxsafe.SnapshotNamePattern: "must start with a letter and have 2 to 40 letters, digits, '_' or '-'",
	proxmoxsafe.TagPattern:          "must be a Proxmox tag (letters, digits, '_', '-', '+', '.'; at most 64 characters)",
	printableASCIIPattern:           "must contain printable ASCII only",
}

var typeNames = map[string]string{
	"integer": "a whole number",
	"number":  "a number",
	"string":  "a string",
	"boolean": "true or false",
	"object":  "a JSON object",
	"array":   "a JSON array",
}

// schemaFields turns a go-sdk argument validation message (without its
// `validating "arguments": ` prefix) into field problems. tool names the
// tool for "is not a parameter of".
func schemaFields(tool, msg string) []proxmoxsafe.FieldError {
	for _, list := range []struct {
		re      *lazyre.Regexp
		problem string
	}{{requiredRe, "is required"}, {additionalRe, "is not a parameter of " + tool}} {
		m := list.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		var out []proxmoxsafe.FieldError
		for _, q := range quotedRe.FindAllString(m[1], 16) { // Go-quoted names: ["a" "b"]
			if n, err := strconv.Unquote(q); err == nil {
				out = append(out, proxmoxsafe.FieldError{Field: clean(n, 64), Problem: list.problem})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	m := schemaPathRe.FindStringSubmatch(msg)
	if m == nil {
		return []proxmoxsafe.FieldError{{Field: "arguments", Problem: clean(msg, 512)}}
	}
	field := strings.ReplaceAll(strings.TrimPrefix(m[1], "/properties/"), "/properties/", ".")
	return []proxmoxsafe.FieldError{{Field: clean(field, 64), Problem: keywordProblem(m[2], m[3], field)}}
}

// keywordProblem words one failed schema keyword.
func keywordProblem(keyword, detail, field string) string {
	switch keyword {
	case "maximum", "exclusiveMaximum":
		if m := limitRe.FindStringSubmatch(detail); m != nil {
			return "must be at most " + number(m[1])
		}
	case "minimum", "exclusiveMinimum":
		if m := limitRe.FindStringSubmatch(detail); m != nil {
			return "must be at least " + number(m[1])
		}
	case "maxLength":
		if m := lengthRe.FindStringSubmatch(detail); m != nil {
			return "must be at most " + m[1] + " characters long"
		}
	case "minLength":
		if m := lengthRe.FindStringSubmatch(detail); m != nil {
			return "must be at least " + m[1] + " characters long"
		}
	case "enum":
		if _, list, ok := strings.Cut(detail, "does not equal any of: ["); ok {
			return "must be one of: " + strings.Join(strings.Fields(strings.TrimSuffix(list, "]")), ", ")
		}
	case "type":
		if m := typeRe.FindStringSubmatch(detail); m != nil {
			if n, ok := typeNames[m[1]]; ok {
				return "must be " + n
			}
		}
	case "pattern":
		for pat, problem := range patternProblems {
			if strings.HasSuffix(detail, strconv.Quote(pat)) {
				return problem
			}
		}
		return "does not have the required format"
	case "not":
		if field == "snapname" {
			return "is a name Proxmox reserves for this guest type (qemu: current, pending; lxc: current, vzdump)"
		}
	}
	return clean(keyword+": "+detail, 256)
}

// number prints a schema bound without a fraction when it has none.
func number(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// fieldsText is the library's "field: problem; field: problem".
func fieldsText(fields []proxmoxsafe.FieldError) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Problem
	}
	return strings.Join(parts, "; ")
}
