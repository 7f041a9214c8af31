package proxmoxsafe

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// Independent restatements of Proxmox's rules (FACTS §6), written without
// the package's regexps, so a bug in one is caught by the other.
var (
	refNode = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$`)
	refSnap = regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]+$`)
)

func FuzzValidators(f *testing.F) {
	for _, s := range []string{"pve1", "a", "a-b", "-a", "a-", "pve1.lan", "pve1/..", "x" + strings.Repeat("y", 70), "current", "Pending", "vzdump", "snap_1", "1snap", "a b", "\u0430bc", ""} {
		f.Add(s, 100)
	}
	f.Add("pve", 99)
	f.Add("pve", 999999999)
	f.Add("pve", 1000000000)
	f.Add("pve", -1)
	f.Fuzz(func(t *testing.T, s string, vmid int) {
		wantNode := refNode.MatchString(s) && len(s) <= 63
		if ValidNode(s) != wantNode {
			t.Errorf("ValidNode(%q) = %v, want %v", s, !wantNode, wantNode)
		}
		if ValidVMID(vmid) != (vmid >= 100 && vmid <= 999999999) {
			t.Errorf("ValidVMID(%d) wrong", vmid)
		}
		for _, typ := range []GuestType{TypeQEMU, TypeLXC} {
			lower := strings.ToLower(s)
			reserved := lower == "current" || (typ == TypeQEMU && lower == "pending") || (typ == TypeLXC && lower == "vzdump")
			want := refSnap.MatchString(s) && len(s) <= 40 && !reserved
			if ValidSnapshotName(typ, s) != want {
				t.Errorf("ValidSnapshotName(%s, %q) = %v, want %v", typ, s, !want, want)
			}
		}
		// Whatever validates as a node is safe as one path segment.
		if ValidNode(s) && strings.ContainsAny(s, "/?#%.") {
			t.Errorf("node %q validates but holds a path character", s)
		}
	})
}

func FuzzPhraseApprover(f *testing.F) {
	target := Target{Node: "pve1", Type: TypeQEMU, VMID: 101}
	phrase := ApprovalPhrase("shutdown", target)
	for _, s := range []string{phrase, "", strings.ToLower(phrase), phrase + " ", " " + phrase, phrase + "\n", "APPROVE shutdown pve1/qemu/1010", "APPROVE shutdown pve1/qemu/\u200b101", "APPROVE\u00a0shutdown pve1/qemu/101"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, given string) {
		err := PhraseApprover{}.Approve(context.Background(), ApprovalRequest{
			Action: "shutdown", Target: target, Phrase: phrase, Given: given,
		})
		if (err == nil) != (given == phrase) {
			t.Fatalf("Approve(%q) = %v; only the exact phrase may pass", given, err)
		}
		if err != nil {
			var ae *ApprovalError
			if !errors.As(err, &ae) || ae.Required != phrase {
				t.Fatalf("refusal %v does not name the phrase", err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("refusal text is not valid UTF-8")
			}
		}
	})
}
