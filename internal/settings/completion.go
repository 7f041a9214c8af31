package settings

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/internal/sanitize"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// CompletionShells are the shells Completion writes a script for.
var CompletionShells = []string{"bash", "zsh", "fish"}

// completionCommands are the binary's commands, as a shell completes them.
var completionCommands = []string{"serve", "tools", "call", "doctor", "approve", "deny", "grants", "healthcheck", "audit", "completion"}

// completionValues are the values a shell offers after a flag that takes
// one of a few words; other value flags complete file names.
func completionValues() map[string][]string {
	profiles := []string{}
	for _, p := range proxmoxsafe.Profiles() {
		profiles = append(profiles, string(p))
	}
	return map[string][]string{
		"profile":    profiles,
		"log-level":  {"debug", "info", "warn", "error"},
		"log-format": {"text", "json"},
		"transport":  {"stdio", "streamable-http", "sse"},
	}
}

// Completion writes the completion script for shell ("bash", "zsh" or
// "fish"): the commands, every flag of the settings table (a flag's
// values where they are a few words), the tool names after tools and
// call, and the subcommands of audit, grants and completion. The flags
// come from the same table as --help, so the two cannot disagree.
func Completion(w io.Writer, shell string, tools []string) error {
	var valueFlags, boolFlags []string
	for _, s := range table {
		switch {
		case s.flag == "":
		case s.boolean:
			boolFlags = append(boolFlags, "--"+s.flag)
		default:
			valueFlags = append(valueFlags, "--"+s.flag)
		}
	}
	values := completionValues()
	for f := range values {
		if !slices.ContainsFunc(table, func(s *setting) bool { return s.flag == f && !s.boolean }) {
			delete(values, f)
		}
	}
	switch shell {
	case "bash", "zsh":
		var b strings.Builder
		if shell == "zsh" {
			// zsh runs bash completion functions through bashcompinit,
			// which needs compinit's compdef (a .zshrc usually loads it).
			b.WriteString("(( $+functions[compdef] )) || { autoload -U +X compinit && compinit -i }\nautoload -U +X bashcompinit && bashcompinit\n")
		}
		fmt.Fprintf(&b, `_proxmox_safe_mcp() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local commands=%q
  local flags=%q
  local valueflags=%q
  local tools=%q
  case "$prev" in
`, strings.Join(completionCommands, " "), strings.Join(append(append([]string{}, boolFlags...), valueFlags...), " "), " "+strings.Join(valueFlags, " ")+" ", strings.Join(tools, " "))
		for _, f := range slices.Sorted(maps.Keys(values)) {
			fmt.Fprintf(&b, "    --%s) COMPREPLY=( $(compgen -W %q -- \"$cur\") ); return ;;\n", f, strings.Join(values[f], " "))
		}
		b.WriteString(`    tools|call) COMPREPLY=( $(compgen -W "$tools" -- "$cur") ); return ;;
    audit) COMPREPLY=( $(compgen -W "verify repair" -- "$cur") ); return ;;
    grants) COMPREPLY=( $(compgen -W "list" -- "$cur") ); return ;;
    completion) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ); return ;;
  esac
  if [[ "$valueflags" == *" $prev "* ]]; then
    COMPREPLY=( $(compgen -f -- "$cur") ); return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$flags --help" -- "$cur") ); return
  fi
  local i w
  for (( i=1; i<COMP_CWORD; i++ )); do
    w=${COMP_WORDS[i]}
    if [[ "$w" != -* && "$valueflags" != *" ${COMP_WORDS[i-1]} "* ]]; then
      COMPREPLY=( $(compgen -f -- "$cur") ); return
    fi
  done
  COMPREPLY=( $(compgen -W "$commands" -- "$cur") )
}
complete -F _proxmox_safe_mcp proxmox-safe-mcp
`)
		_, err := io.WriteString(w, b.String())
		return err
	case "fish":
		var b strings.Builder
		b.WriteString("complete -c proxmox-safe-mcp -f\n")
		// Not __fish_use_subcommand: it takes a flag's value ("admin" in
		// --profile admin) for the command.
		cmds := strings.Join(completionCommands, " ")
		fmt.Fprintf(&b, "complete -c proxmox-safe-mcp -n %s -a %s\n", fishQuote("not __fish_seen_subcommand_from "+cmds), fishQuote(cmds))
		for _, s := range table {
			if s.flag == "" {
				continue
			}
			line := "complete -c proxmox-safe-mcp -l " + s.flag
			if !s.boolean {
				line += " -r"
				if v, ok := values[s.flag]; ok {
					line += " -a " + fishQuote(strings.Join(v, " "))
				} else {
					line += " -F"
				}
			}
			b.WriteString(line + " -d " + fishQuote(firstClause(s.help)) + "\n")
		}
		fmt.Fprintf(&b, "complete -c proxmox-safe-mcp -n '__fish_seen_subcommand_from tools call' -a %s\n", fishQuote(strings.Join(tools, " ")))
		b.WriteString("complete -c proxmox-safe-mcp -n '__fish_seen_subcommand_from audit' -a 'verify repair'\n")
		b.WriteString("complete -c proxmox-safe-mcp -n '__fish_seen_subcommand_from grants' -a list\n")
		b.WriteString("complete -c proxmox-safe-mcp -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	return Errorf("completion: unknown shell %s (known: %s)", sanitize.Quote(shell), strings.Join(CompletionShells, ", "))
}

// fishQuote quotes s for fish, where only \ and ' are special inside '…'.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstClause is a flag's help up to its first comma or parenthesis:
// fish shows it beside the flag, where a line must stay short.
func firstClause(help string) string {
	if i := strings.IndexAny(help, ",("); i > 0 {
		help = help[:i]
	}
	return strings.TrimSpace(help)
}
