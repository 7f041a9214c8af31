package proxmoxsafe_test

import (
	"errors"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// TestOutcomeErr: only a failed task is an error (a *TaskError naming the
// task and its exit status); a timeout is not, the action may still
// complete.
func TestOutcomeErr(t *testing.T) {
	t.Parallel()
	var none *proxmoxsafe.Outcome
	if none.Err() != nil {
		t.Error("a nil outcome is an error")
	}
	for _, st := range []proxmoxsafe.OutcomeStatus{proxmoxsafe.OutcomeCompleted, proxmoxsafe.OutcomeTimeout} {
		if err := (&proxmoxsafe.Outcome{Status: st}).Err(); err != nil {
			t.Errorf("outcome %s: Err = %v", st, err)
		}
	}
	err := (&proxmoxsafe.Outcome{Status: proxmoxsafe.OutcomeFailed, UPID: "UPID:pve1:x", ExitStatus: "VM 100 not running"}).Err()
	var te *proxmoxsafe.TaskError
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || !errors.As(err, &te) || te.UPID != "UPID:pve1:x" || te.ExitStatus != "VM 100 not running" {
		t.Errorf("failed outcome: Err = %v (%+v)", err, te)
	}
}
