package mcpserver

import "strings"

// abbreviations end with a period that does not end a sentence.
var abbreviations = []string{"e.g.", "i.e.", "etc.", "vs.", "approx."}

// Summary returns the first sentence of the tool's description, for lists
// and tables: the text up to the first ". " that ends a sentence ("e.g. "
// and the like do not), or the first line when that is shorter.
func (t ToolInfo) Summary() string {
	s := strings.TrimSpace(t.Description)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for from := 0; ; {
		i := strings.Index(s[from:], ". ")
		if i < 0 {
			return s
		}
		end := from + i + 1 // just after the period
		abbrev := false
		for _, a := range abbreviations {
			if strings.HasSuffix(s[:end], " "+a) || strings.HasSuffix(s[:end], "("+a) || s[:end] == a {
				abbrev = true
				break
			}
		}
		if !abbrev {
			return s[:end]
		}
		from = end
	}
}
