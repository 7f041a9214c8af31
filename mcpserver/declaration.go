package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// What a tool states the same way for every operation is composed here,
// once, from the operation's declaration (proxmoxsafe.Operations): the
// class, approval format and privileges of [ToolInfo], and the sentences every
// mutation tool's description repeats. A tool writes only what is its own.

// declarations are the library's operation declarations by name, read once.
var declarations = sync.OnceValue(func() map[proxmoxsafe.Operation]proxmoxsafe.OperationInfo {
	m := map[proxmoxsafe.Operation]proxmoxsafe.OperationInfo{}
	for _, op := range proxmoxsafe.Operations() {
		m[op.Name] = op
	}
	return m
})

// class is the mutation class of the tool's operations as they declare
// it ([ToolInfo.Class]; "" for a read tool). A tool's operations share
// one class; an operation without a declaration, or two classes, is a
// programming error that panics at the first listing, since a tool with
// no class would be offered under every policy.
func (d toolDef) class() proxmoxsafe.Class {
	var c proxmoxsafe.Class
	for i, op := range d.ops {
		decl, ok := declarations()[op]
		if !ok {
			panic("mcpserver: tool " + d.info.Name + " calls " + string(op) + ", which no operation declares")
		}
		if i > 0 && decl.Class != c {
			panic("mcpserver: tool " + d.info.Name + " mixes the classes " + string(c) + " and " + string(decl.Class))
		}
		c = decl.Class
	}
	return c
}

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
		optional = " (" + optionalParts + ")"
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

// mutationWords are what a mutation tool's description says that is its
// own; [toolDef.description] composes the rest from the operation's
// declaration (class, approval format, the class's default levels), so
// the sentences every mutation tool repeats are written once, here.
type mutationWords struct {
	// does is what the tool does: the description's opening sentences.
	does string
	// allows is what the operator must allow and not protect besides
	// enabling the class; "" is "allows the node and does not protect the
	// guest".
	allows string
	// unless is the tool's own preconditions, after "…, and ".
	unless string
	// also are sentences after the refusal, before the approval.
	also string
	// phrase is the tool's own note on its phrase, in the parentheses
	// after the declared format.
	phrase string
	// when, when set, says when the phrase applies, e.g. "only with
	// apply" ([ToolInfo.ApprovalFormat], the approval parameter).
	when string
	// shows is what the first call's refusal shows, in the description
	// and the approval parameter; "" is the usual (defaultShows, and
	// approvalDescription's own default).
	shows string
	// returns is what the receipt carries; "" is "the task UPID".
	// "none" marks a tool that returns no receipt (snapshot_cleanup).
	returns string
	// waits is what the wait verifies after the task, e.g. "then until
	// the VM runs unpaused".
	waits string
	// after are the closing sentences.
	after string
}

// Sentences of [toolDef.description].
const (
	// refusedUnless opens the refusal sentence with the class.
	refusedUnless = "Refused (nothing is done) unless the operator enabled the %s class, %s, and %s. "
	// defaultAllows is what most tools need allowed besides the class.
	defaultAllows = "allows the node and does not protect the guest"
	// optionalParts explains a declared format's [ … ] parts.
	optionalParts = "a part in [ ] only with its option"
	// defaultShows is what the first refusal shows unless the tool's
	// shows says more.
	defaultShows = "exact phrase, current state, effect"
	// receiptIs and waitSays frame what the tool returns and its wait.
	receiptIs = "Returns a receipt with %s: submission, not completion. "
	waitSays  = "With wait: true it waits (timeout_seconds, default 30) for the task and %s, and says completed OK, completed with warnings, FAILED (a tool error, with the exit status and last log lines) or still running at the timeout (not an error: check the task later)."
	// responderApproval is the approval sentence of a class the operator
	// runs with no approval by default (noApprovalByDefault).
	responderApproval = "No approval phrase is needed unless the operator requires one for this class (the refusal then names it). Every call, refused or not, is audited."
)

// description composes a mutation tool's description from w and the
// declaration of the operation it performs: the class it needs enabled,
// its approval phrase and who approves by default (the class's default
// levels), and its receipt and wait.
func (d toolDef) description() string {
	w := d.words
	decl, ok := d.mutationDecl()
	if !ok {
		panic("mcpserver: tool " + d.info.Name + " has mutation words but no operation with an approval format")
	}
	allows := w.allows
	if allows == "" {
		allows = defaultAllows
	}
	var b strings.Builder
	b.WriteString(w.does + " ")
	fmt.Fprintf(&b, refusedUnless, decl.Class, allows, w.unless)
	if w.also != "" {
		b.WriteString(w.also + " ")
	}
	var notes []string
	if strings.Contains(decl.ApprovalFormat, "[") {
		notes = append(notes, optionalParts)
	}
	if w.phrase != "" {
		notes = append(notes, w.phrase)
	}
	phrase := "\"" + decl.ApprovalFormat + "\""
	if len(notes) > 0 {
		phrase += " (" + strings.Join(notes, "; ") + ")"
	}
	switch {
	case noApprovalByDefault[decl.Class]:
		b.WriteString(responderApproval + " ")
	case !slices.Contains(proxmoxsafe.DefaultApprovals(decl.Class), proxmoxsafe.LevelPhrase):
		b.WriteString("By default a person must approve it (an elicitation form at the client, or a grant the operator approves on the server host); the typed phrase " +
			phrase + " counts only where the operator allowed it. ")
	default:
		shows := defaultShows
		if w.shows != "" {
			shows = w.shows
		}
		b.WriteString("Needs the approval phrase " + phrase + " unless the operator set another approval level: call without approval first, show the user the refusal (" +
			shows + ") and pass the phrase only once they agree. ")
	}
	if w.returns != "none" {
		returns := w.returns
		if returns == "" {
			returns = "the task UPID"
		}
		fmt.Fprintf(&b, receiptIs, returns)
		fmt.Fprintf(&b, waitSays, w.waits)
		b.WriteString(" ")
	}
	if w.after != "" {
		b.WriteString(w.after)
	}
	return strings.TrimSuffix(b.String(), " ")
}

// describedBy returns d whose description is composed from w
// ([toolDef.description]).
func (d toolDef) describedBy(w mutationWords) toolDef {
	d.words = &w
	return d
}
