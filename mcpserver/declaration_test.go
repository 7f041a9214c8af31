package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// handWritten are the mutation tools whose description is not composed
// by description: api_request's sentences have another shape (nothing is
// sent, an approval bound to method, path and parameters, Proxmox's
// answer instead of a receipt). It must still name its class and format.
var handWritten = []string{ToolAPIRequest}

// composedParts are what every mutation tool's definition must say
// because its declaration says it: in its description the class it needs
// enabled with who approves by default, in its approval parameter the
// exact format. (What every mutation shares is in the instructions,
// TestInstructions.)
func composedParts(d toolDef, decl proxmoxsafe.OperationInfo) []string {
	_ = d
	return []string{fmt.Sprintf(classSays, decl.Class, approvalBy(decl.Class)), "\"" + phraseHead(decl.ApprovalFormat) + "\""}
}

// definitionText is what composedParts are looked for in: the
// description and the approval parameter's description.
func definitionText(info ToolInfo) string {
	text := info.Description
	if p := info.InputSchema.Properties["approval"]; p != nil {
		text += "\n" + p.Description
	}
	return text
}

// missingParts returns the composed parts description lacks.
func missingParts(description string, parts []string) []string {
	var missing []string
	for _, p := range parts {
		if !strings.Contains(description, p) {
			missing = append(missing, p)
		}
	}
	return missing
}

// TestMutationDescriptionsComposed fails when a mutation tool's served
// description lacks a part its declaration implies, when its class
// is not its operation's, or when a mutation tool writes its own
// description instead of having it composed (description).
func TestMutationDescriptionsComposed(t *testing.T) {
	checked := 0
	for _, d := range toolList() {
		if d.info.ReadOnly() {
			if d.words != nil {
				t.Errorf("%s: read-only with mutation words", d.info.Name)
			}
			continue
		}
		decl, ok := d.mutationDecl()
		if !ok {
			t.Errorf("%s: changes something but no operation declares an approval format", d.info.Name)
			continue
		}
		info := d.build()
		if info.Class != decl.Class {
			t.Errorf("%s: class %q, its operation %s declares %q", d.info.Name, info.Class, decl.Name, decl.Class)
		}
		if d.words == nil && !slices.Contains(handWritten, d.info.Name) {
			t.Errorf("%s: description written by hand; give it mutationWords (describedBy)", d.info.Name)
		}
		if m := missingParts(definitionText(info), composedParts(d, decl)); len(m) > 0 {
			t.Errorf("%s: description lacks %q\n%s", d.info.Name, m, info.Description)
		}
		checked++
	}
	if checked < 18 {
		t.Errorf("checked %d mutation tools, want at least 18", checked)
	}
}

// TestComposedPartsCatchAnOmission shows the check above fails when one
// composed part is missing: the class, the format or who approves.
func TestComposedPartsCatchAnOmission(t *testing.T) {
	var d toolDef
	for _, c := range toolList() {
		if c.info.Name == ToolGuestSuspend {
			d = c
		}
	}
	decl, _ := d.mutationDecl()
	desc := definitionText(d.build())
	parts := composedParts(d, decl)
	if m := missingParts(desc, parts); len(m) > 0 {
		t.Fatalf("composed description lacks %q", m)
	}
	for _, cut := range []string{"Class power-extra", phraseHead(decl.ApprovalFormat), "approval: the phrase"} {
		broken := strings.Replace(desc, cut, "", 1)
		if broken == desc {
			t.Fatalf("%q is not in the description", cut)
		}
		if m := missingParts(broken, parts); len(m) == 0 {
			t.Errorf("without %q the check passes", cut)
		}
	}
}

// TestDescriptionNeedsADeclaration: mutation words on a tool with no
// mutating operation are a programming error, caught at the first build.
func TestDescriptionNeedsADeclaration(t *testing.T) {
	d := toolDef{info: ToolInfo{Name: "x"}, words: &mutationWords{does: "x"}}
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	_ = d.description()
}

// TestToolClassIsItsOperations: a tool's class is what its operations
// declare, for the read tools too (api_get's is the gateway's); a tool
// whose operation has no declaration, or whose operations disagree,
// panics rather than being listed with no class (offered under every
// policy).
func TestToolClassIsItsOperations(t *testing.T) {
	for _, d := range toolList() {
		want := proxmoxsafe.Class("")
		for _, op := range proxmoxsafe.Operations() {
			if slices.Contains(d.ops, op.Name) {
				want = op.Class
			}
		}
		if got := d.build().Class; got != want {
			t.Errorf("%s: class %q, its operations declare %q", d.info.Name, got, want)
		}
	}
	for name, d := range map[string]toolDef{
		"undeclared": {info: ToolInfo{Name: "x"}, ops: ops("NoSuchOperation")},
		"mixed":      {info: ToolInfo{Name: "x"}, ops: ops(proxmoxsafe.OpGuestStatus, proxmoxsafe.OpGuestPower)},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			_ = d.class()
		}()
	}
}
