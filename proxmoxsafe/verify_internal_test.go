package proxmoxsafe

import (
	"strings"
	"testing"
)

// TestVerifierChosenByDeclaration: a receipt is proven by its own
// operation's verifier; one from elsewhere (no operation) by the first
// operation that declares its action; a power action never by another
// operation's; an action no verifier proves is refused with the list.
func TestVerifierChosenByDeclaration(t *testing.T) {
	t.Parallel()
	for _, op := range operations {
		if op.verify == nil {
			continue
		}
		for _, a := range op.info.Actions {
			got := verifierFor(&Receipt{Action: a.Name, op: op.info.Name})
			if got != op.verify {
				t.Errorf("%s %s: verifier %p, declared %p", op.info.Name, a.Name, got, op.verify)
			}
		}
	}
	for _, a := range PowerActions() {
		if v := verifierFor(&Receipt{Action: string(a)}); v != powerVerifier {
			t.Errorf("a receipt from elsewhere for %s: verifier %p, want the power verifier", a, v)
		}
	}
	if v := verifierFor(&Receipt{Action: "start", op: OpSnapshotGuest}); v != powerVerifier {
		t.Errorf("a start receipt naming another operation: verifier %p, want the power verifier", v)
	}
	for _, a := range []string{"snapshot-cleanup", "POST", "bogus", ""} {
		if v := verifierFor(&Receipt{Action: a}); v != nil {
			t.Errorf("%q: verifier %p, want none", a, v)
		}
	}
	msg := unknownActionError().Error()
	for _, op := range operations {
		if op.verify == nil {
			continue
		}
		for _, a := range op.info.Actions {
			if !strings.Contains(msg, a.Name) {
				t.Errorf("the refusal %q does not list %s", msg, a.Name)
			}
		}
	}
}
