package mcpserver

import (
	"slices"
	"strings"
	"sync"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// What a tool states the same way for every operation is composed here,
// once, from the operation's declaration (proxmoxsafe.Operations): the
// approval format of [ToolInfo], the privileges, and the sentences every
// mutation tool's description repeats. A tool writes only what is its own.

// declarations are the library's operation declarations by name, read once.
var declarations = sync.OnceValue(func() map[proxmoxsafe.Operation]proxmoxsafe.OperationInfo {
	m := map[proxmoxsafe.Operation]proxmoxsafe.OperationInfo{}
	for _, op := range proxmoxsafe.Operations() {
		m[op.Name] = op
	}
	return m
})

// mutationDecl returns the declaration of the operation a tool that
// changes something performs: the first of its operations that declares
// an approval format.
func (d toolDef) mutationDecl() (proxmoxsafe.OperationInfo, bool) {
	for _, op := range d.ops {
		if decl, ok := declarations()[op]; ok && decl.ApprovalFormat != "" {
			return decl, true
		}
	}
	return proxmoxsafe.OperationInfo{}, false
}

// noApprovalByDefault are the classes whose tools say they need no
// approval unless the operator requires one: the responder class, meant
// for an automated responder with no human in the loop, which the binary's
// responder profile runs at the level none.
var noApprovalByDefault = map[proxmoxsafe.Class]bool{proxmoxsafe.ClassResponder: true}

// approvalFormat is [ToolInfo.ApprovalFormat]: the declared format, with
// when it applies where that is not simply "always": the responder's
// "none by default", a tool's own condition (when), and the levels of a
// class whose default is a person, not the phrase.
func approvalFormat(decl proxmoxsafe.OperationInfo, when string) string {
	f := decl.ApprovalFormat
	if when != "" {
		f += " (" + when + ")"
	}
	if noApprovalByDefault[decl.Class] {
		return "none by default; " + f + " when required"
	}
	if levels := proxmoxsafe.DefaultApprovals(decl.Class); !slices.Contains(levels, proxmoxsafe.LevelPhrase) {
		names := make([]string, len(levels))
		for i, l := range levels {
			names[i] = string(l)
		}
		f += " (only at the phrase level; default " + strings.Join(names, ", ") + ")"
	}
	return f
}

// approvalDescription is the description of a tool's approval parameter:
// the declared format, when a phrase counts at all (as in approvalFormat),
// and what the first call's refusal shows (shows, the tool's own words;
// "" for the usual).
func approvalDescription(decl proxmoxsafe.OperationInfo, when, shows string) string {
	f := decl.ApprovalFormat
	optional := ""
	if strings.Contains(f, "[") {
		optional = " (a part in [ ] only with its option)"
	}
	switch {
	case noApprovalByDefault[decl.Class]:
		if when != "" {
			when = ", and " + when
		}
		return "Only when the operator requires approval for these tools" + when + ": exactly \"" + f + "\"" + optional + ". By default none is needed: omit it."
	case !slices.Contains(proxmoxsafe.DefaultApprovals(decl.Class), proxmoxsafe.LevelPhrase):
		if shows == "" {
			shows = "how to approve"
		}
		return "Only when the operator set the " + string(decl.Class) + " class to the phrase level: exactly \"" + f + "\"" + optional +
			". By default a person must approve (elicitation or an operator grant) and a phrase does not count. Omit it on the first call: the refusal says " + shows + "."
	}
	if shows == "" {
		shows = "the exact phrase, the current state and what approving will do"
	}
	return "Exactly \"" + f + "\"" + optional + ", as the refusal or a plan: true call states it, unless the operator set another approval level. " +
		"Omit it on the first call: the refusal gives " + shows + ", for the user to approve."
}

// approvalShowing returns d whose approval parameter says the refusal
// shows shows (approvalDescription).
func (d toolDef) approvalShowing(shows string) toolDef {
	d.approvalShows = shows
	return d
}

// privilegesOf renders the declared privileges of operations, e.g.
// "Datastore.Audit on /storage/{storage}", so the tool documentation and
// the library cannot drift apart.
func privilegesOf(ops []proxmoxsafe.Operation) []string {
	var out []string
	for _, decl := range proxmoxsafe.Operations() {
		if !slices.Contains(ops, decl.Name) {
			continue
		}
		for _, p := range decl.Privileges {
			s := p.Name + " on " + p.Path
			switch {
			case p.Optional:
				s += " (optional: " + p.Note + ")"
			case p.Note != "":
				s += " (" + p.Note + ")"
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		out = []string{"none (a token may always read its own permissions)"}
	}
	return out
}
