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

// declarations are the library's operation declarations, read once, with
// each one's place by name. A map of indices, not of declarations: the
// runtime's string-key fast paths take values of at most 128 bytes, and an
// OperationInfo is larger; filling a map of them cost every start 35,000
// instructions and a second copy of the declarations, the indices 7,000
// (callgrind).
var declarations = sync.OnceValue(func() declarationTable {
	ops := proxmoxsafe.Operations()
	t := declarationTable{ops: ops, index: make(map[proxmoxsafe.Operation]int, len(ops))}
	for i, op := range ops {
		t.index[op.Name] = i
	}
	return t
})

type declarationTable struct {
	ops   []proxmoxsafe.OperationInfo
	index map[proxmoxsafe.Operation]int
}

// declaration returns op's declaration; false (and the zero value) when no
// operation declares op.
func declaration(op proxmoxsafe.Operation) (proxmoxsafe.OperationInfo, bool) {
	t := declarations()
	i, ok := t.index[op]
	if !ok {
		return proxmoxsafe.OperationInfo{}, false
	}
	return t.ops[i], true
}

// class is the mutation class of the tool's operations as they declare
// it ([ToolInfo.Class]; "" for a read tool). A tool's operations share
// one class; an operation without a declaration, or two classes, is a
// programming error that panics at the first listing, since a tool with
// no class would be offered under every policy.
func (d toolDef) class() proxmoxsafe.Class {
	var c proxmoxsafe.Class
	for i, op := range d.ops {
		decl, ok := declaration(op)
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
		if decl, ok := declaration(op); ok && decl.ApprovalFormat != "" {
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
// the head of the declared format (phraseHead), when a phrase counts at
// all (as in approvalFormat), and the tool's own note on its phrase
// (phrase; "" for none). How the phrase is obtained and when to pass it is
// the same for every tool and said once, in the server's instructions;
// here it is one short sentence, so that a host which does not show the
// instructions still tells the model to ask before approving.
func approvalDescription(decl proxmoxsafe.OperationInfo, when, phrase string) string {
	f := "\"" + phraseHead(decl.ApprovalFormat) + "\""
	if phrase != "" {
		f += " (" + phrase + ")"
	}
	if when != "" {
		when = " " + when
	}
	switch {
	case noApprovalByDefault[decl.Class]:
		return "Only if the operator requires one" + when + ": the refusal's phrase, " + f + "."
	case !slices.Contains(proxmoxsafe.DefaultApprovals(decl.Class), proxmoxsafe.LevelPhrase):
		return "Only at the phrase level" + when + ": the refusal's phrase, " + f + "."
	}
	if when != "" {
		when = "," + when
	}
	return "The refusal's phrase, " + f + when + ", once the user agrees."
}

// phraseHead is an approval format up to the target it names: "APPROVE
// create <node>/lxc/<vmid> …" for a format that goes on to bind every
// parameter. The model passes the phrase the refusal or the plan gives,
// never one it composed, so the rest of the format (up to 300 bytes for a
// create, in every listing) would only cost; [ToolInfo.ApprovalFormat]
// and docs/TOOLS.md keep it whole.
func phraseHead(format string) string {
	fields := strings.SplitN(format, " ", 4)
	head := strings.Join(fields[:min(3, len(fields))], " ")
	if i := strings.IndexByte(head, '['); i >= 0 {
		head = head[:i]
	}
	if head == format {
		return format
	}
	return head + " …"
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
// declaration (class, approval format, the class's default levels). What
// every mutation shares (the policy's refusals, how to approve, the
// receipt and the wait) is said once, in the server's instructions
// (instructions.go), not in every tool.
type mutationWords struct {
	// does is what the tool does: the description's opening sentences.
	does string
	// allows is what the operator must allow and not protect where it
	// differs from the instructions' (the node, the guest), e.g. "allows
	// the node and does not protect the new VMID"; "" for the usual.
	allows string
	// unless is the tool's own preconditions, after "Refused unless ",
	// beyond the ones every mutation has (the instructions'); "" for none.
	unless string
	// also are sentences after the refusal.
	also string
	// phrase is the tool's own note on its phrase, in the approval
	// parameter's description after the declared format.
	phrase string
	// when, when set, says when the phrase applies, e.g. "only with
	// apply" ([ToolInfo.ApprovalFormat], the approval parameter).
	when string
	// returns is what the receipt carries beyond the task UPID, after
	// "Returns "; "" says nothing more. "none" marks a tool that returns no
	// receipt (snapshot_cleanup).
	returns string
	// waits is what the wait checks after the task where that is not
	// obvious from what the tool does, e.g. "until the volume is no longer
	// listed"; "" for none.
	waits string
	// after are the closing sentences.
	after string
}

// Sentences of [toolDef.description].
const (
	// classSays names the class and who approves by default.
	classSays = "Class %s; approval: %s."
	// optionalParts explains a declared format's [ … ] parts.
	optionalParts = "a part in [ ] only with its option"
)

// approvalBy is who approves a class's tools by default, in classSays.
func approvalBy(c proxmoxsafe.Class) string {
	switch {
	case noApprovalByDefault[c]:
		return "none by default"
	case !slices.Contains(proxmoxsafe.DefaultApprovals(c), proxmoxsafe.LevelPhrase):
		return "a person by default"
	}
	return "the phrase"
}

// description composes a mutation tool's description from w and the
// declaration of the operation it performs: the class it needs enabled
// and who approves by default (the class's default levels), then the
// tool's own preconditions and receipt.
func (d toolDef) description() string {
	w := d.words
	decl, ok := d.mutationDecl()
	if !ok {
		panic("mcpserver: tool " + d.info.Name + " has mutation words but no operation with an approval format")
	}
	var b strings.Builder
	b.WriteString(w.does + " ")
	fmt.Fprintf(&b, classSays+" ", decl.Class, approvalBy(decl.Class))
	switch {
	case w.allows != "" && w.unless != "":
		b.WriteString("Refused unless the operator " + w.allows + ", and " + w.unless + ". ")
	case w.allows != "":
		b.WriteString("Refused unless the operator " + w.allows + ". ")
	case w.unless != "":
		b.WriteString("Refused unless " + w.unless + ". ")
	}
	if w.also != "" {
		b.WriteString(w.also + " ")
	}
	if w.returns != "" && w.returns != "none" {
		b.WriteString("Returns " + w.returns + ". ")
	}
	if w.waits != "" {
		b.WriteString("Wait: " + strings.TrimPrefix(w.waits, "then ") + ". ")
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
