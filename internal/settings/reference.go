package settings

import "strings"

// Info is one setting as the reference part of docs/CONFIGURATION.md
// shows it (internal/docgen renders it; --help shows the same table by
// Usage).
type Info struct {
	Flag    string // without dashes; "" when the setting has no flag
	Env     string // "" when the setting has no environment variable
	Default string // Markdown, e.g. "`false`" or "— (required)"
	Doc     string // Markdown: the full meaning
	// Secret marks a value that deliberately has no flag (command lines
	// are visible to other local users).
	Secret bool
	// Aliases are other programs' names for the setting (variables only).
	Aliases []string
	// HTTP marks a setting of the HTTP transport (MCP_*), which the
	// reference lists in its own table.
	HTTP bool
}

// Reference returns every setting, in the order --help shows them.
func Reference() []Info {
	out := make([]Info, 0, len(table))
	for _, s := range table {
		in := Info{Flag: s.flag, Env: s.env, Default: s.docDefault, Doc: s.doc, Secret: s.secret, HTTP: strings.HasPrefix(s.env, "MCP_")}
		if in.Doc == "" {
			in.Doc = s.help
		}
		if in.Default == "" {
			in.Default = "—"
			if s.def != "" {
				in.Default = "`" + s.def + "`"
			}
		}
		for _, a := range s.aliases {
			in.Aliases = append(in.Aliases, a.env)
		}
		out = append(out, in)
	}
	return out
}
