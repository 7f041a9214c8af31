package proxmoxsafe

import (
	"errors"
	"strings"
	"testing"
)

// TestResumePrecondition: resume continues a paused VM or a hibernated
// one (locked "suspended") and refuses everything else, saying why.
func TestResumePrecondition(t *testing.T) {
	t.Parallel()
	tg := Target{Node: "pve1", Type: TypeQEMU, VMID: 100}
	for _, tt := range []struct {
		name    string
		s       GuestState
		mention string // "" when resume may go ahead
	}{
		{"paused", GuestState{Status: "running", QMPStatus: "paused"}, ""},
		{"hibernated", GuestState{Status: "stopped", Lock: "suspended"}, ""},
		{"running", GuestState{Status: "running", QMPStatus: "running"}, "nothing to resume"},
		{"stopped", GuestState{Status: "stopped"}, "start it instead"},
		{"template", GuestState{Status: "stopped", Template: true, Lock: "suspended"}, "template"},
		{"locked otherwise", GuestState{Status: "running", QMPStatus: "paused", Lock: "backup"}, "locked (backup)"},
	} {
		err := resumePrecondition(tg, tt.s)
		switch {
		case tt.mention == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.mention != "" && (!errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), tt.mention)):
			t.Errorf("%s: err = %v, want a precondition refusal mentioning %q", tt.name, err, tt.mention)
		}
	}
}
