package proxmoxsafe_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// backupEnv is testCluster with the backup class enabled (phrase level).
func backupEnv(t *testing.T, mod func(*proxmoxsafe.Config)) *env {
	t.Helper()
	return newEnv(t, func(c *proxmoxsafe.Config) {
		c.Policy.Classes = append(c.Policy.Classes, proxmoxsafe.ClassBackup)
		if mod != nil {
			mod(c)
		}
	})
}

func backupIn(vmid int, typ proxmoxsafe.GuestType) proxmoxsafe.BackupGuestInput {
	return proxmoxsafe.BackupGuestInput{GuestRef: proxmoxsafe.GuestRef{Node: "pve1", Type: typ, VMID: vmid}, Storage: "local"}
}

// TestBackupGuestWaits: the phrase names every effect-changing parameter;
// the request carries exactly them plus remove=0 and nothing root-only;
// the wait proves a new backup volume newer than the task, listed after.
func TestBackupGuestWaits(t *testing.T) {
	t.Parallel()
	e := backupEnv(t, nil)
	in := backupIn(100, proxmoxsafe.TypeQEMU)
	in.Mode, in.Compress, in.Protected, in.Notes = "stop", "gzip", true, "pre-upgrade {{guestname}}"
	want := "APPROVE backup pve1/qemu/100 storage=local mode=stop compress=gzip protected=1 notes-template=" + proxmoxsafe.TextDigest(in.Notes)
	if got := in.ApprovalPhrase(); got != want {
		t.Fatalf("phrase = %q, want %q", got, want)
	}
	_, err := e.client.BackupGuest(t.Context(), in)
	var ar *proxmoxsafe.ApprovalError
	if !errors.As(err, &ar) || ar.Required != want {
		t.Fatalf("err = %v, want approval required with %q", err, want)
	}
	if !strings.Contains(ar.Effect, "shut down, then started again") {
		t.Errorf("effect = %q, want it to say stop mode shuts the running VM down and starts it again", ar.Effect)
	}
	if got := e.fake.MutatingRequests(); len(got) != 0 {
		t.Fatalf("mutating requests before approval: %v", reqLines(got))
	}
	in.Approval = want
	in.Wait = fastWait
	before := time.Now().Add(-time.Second)
	r, err := e.client.BackupGuest(t.Context(), in)
	if err != nil {
		t.Fatalf("BackupGuest: %v", err)
	}
	if r.Outcome == nil || r.Outcome.Status != proxmoxsafe.OutcomeCompleted || !r.Outcome.Verified {
		t.Fatalf("outcome = %+v, want completed and verified", r.Outcome)
	}
	if r.Task.Type != "vzdump" || r.Storage != "local" || !strings.HasPrefix(r.VolID, "local:backup/vzdump-qemu-100-") {
		t.Fatalf("receipt = %+v", r)
	}
	muts := e.fake.MutatingRequests()
	if len(muts) != 1 || muts[0].Path != "/nodes/pve1/vzdump" {
		t.Fatalf("mutating requests = %v", reqLines(muts))
	}
	form := muts[0].Form
	wantForm := url.Values{"vmid": {"100"}, "storage": {"local"}, "mode": {"stop"}, "compress": {"gzip"}, "remove": {"0"},
		"protected": {"1"}, "notes-template": {in.Notes}}
	if form.Encode() != wantForm.Encode() {
		t.Errorf("form = %s, want %s", form.Encode(), wantForm.Encode())
	}
	list, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local", VMID: 100})
	if err != nil || len(list.Backups) == 0 {
		t.Fatalf("ListBackups = %+v, %v", list, err)
	}
	b := list.Backups[0]
	if b.VolID != r.VolID || !b.Protected || b.Notes != "pre-upgrade web1" || b.Time.Before(before) {
		t.Errorf("newest backup = %+v", b)
	}
}

// TestBackupGuestTaskFailure: a failed vzdump task ends failed with its
// log tail, and no volume is claimed.
func TestBackupGuestTaskFailure(t *testing.T) {
	t.Parallel()
	e := backupEnv(t, nil)
	e.fake.FailNextTask("job errors")
	in := backupIn(101, proxmoxsafe.TypeQEMU)
	in.Approval, in.Wait = in.ApprovalPhrase(), fastWait
	r, err := e.client.BackupGuest(t.Context(), in)
	if !errors.Is(err, proxmoxsafe.ErrTaskFailed) || r == nil || r.Outcome.Status != proxmoxsafe.OutcomeFailed {
		t.Fatalf("r = %+v, err = %v; want a failed outcome", r, err)
	}
	if tail := strings.Join(r.Outcome.LogTail, "\n"); !strings.Contains(tail, "starting new backup job: vzdump 101") || !strings.Contains(tail, "TASK ERROR: job errors") {
		t.Errorf("log tail = %q", tail)
	}
	if r.VolID != "" {
		t.Errorf("volid = %q after a failure", r.VolID)
	}
}

// TestBackupGuestOKWithoutTask: vzdump answers "OK" and starts nothing
// when the guest is not on the node; that is an error saying nothing was
// backed up, never a receipt.
func TestBackupGuestOKWithoutTask(t *testing.T) {
	t.Parallel()
	e := backupEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/vzdump", Body: []byte(`{"data":"OK"}`)})
	in := backupIn(101, proxmoxsafe.TypeQEMU)
	in.Approval = in.ApprovalPhrase()
	r, err := e.client.BackupGuest(t.Context(), in)
	if r != nil || err == nil || !strings.Contains(err.Error(), "nothing was backed up") {
		t.Fatalf("r = %+v, err = %v; want the no-task error", r, err)
	}
	if n := len(e.fake.Tasks()); n != 0 {
		t.Errorf("tasks = %d", n)
	}
}

// TestBackupGuestRefusals: every refusal sends no mutating request (and
// invalid input no request at all), with one refused audit record.
func TestBackupGuestRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mod     func(*proxmoxsafe.Config)
		in      func() proxmoxsafe.BackupGuestInput
		kind    error
		mention string
		noReq   bool
	}{
		{"class off", func(c *proxmoxsafe.Config) { c.Policy.Classes = c.Policy.Classes[:2] },
			func() proxmoxsafe.BackupGuestInput { return backupIn(101, proxmoxsafe.TypeQEMU) }, proxmoxsafe.ErrNotAllowed, `"backup" mutation class`, true},
		{"node not allowed", nil, func() proxmoxsafe.BackupGuestInput {
			in := backupIn(300, proxmoxsafe.TypeQEMU)
			in.Node = "pve3"
			return in
		}, proxmoxsafe.ErrNotAllowed, "pve3", true},
		{"protected guest", nil, func() proxmoxsafe.BackupGuestInput { return backupIn(106, proxmoxsafe.TypeQEMU) }, proxmoxsafe.ErrNotAllowed, "protected", true},
		{"storage without backup content", nil, func() proxmoxsafe.BackupGuestInput {
			in := backupIn(101, proxmoxsafe.TypeQEMU)
			in.Storage = "local-lvm"
			return in
		}, proxmoxsafe.ErrPrecondition, `does not hold content "backup"`, false},
		{"unknown storage", nil, func() proxmoxsafe.BackupGuestInput {
			in := backupIn(101, proxmoxsafe.TypeQEMU)
			in.Storage = "nowhere"
			return in
		}, proxmoxsafe.ErrPrecondition, "does not exist on node pve1", false},
		{"locked guest", nil, func() proxmoxsafe.BackupGuestInput { return backupIn(104, proxmoxsafe.TypeQEMU) }, proxmoxsafe.ErrPrecondition, "locked (backup)", false},
		{"unknown notes variable", nil, func() proxmoxsafe.BackupGuestInput {
			in := backupIn(101, proxmoxsafe.TypeQEMU)
			in.Notes = "x {{password}}"
			return in
		}, proxmoxsafe.ErrInvalidInput, "notes", true},
		{"wrong phrase", nil, func() proxmoxsafe.BackupGuestInput {
			in := backupIn(101, proxmoxsafe.TypeQEMU)
			in.Approval = "APPROVE backup pve1/qemu/101 storage=local mode=stop compress=zstd"
			return in
		}, proxmoxsafe.ErrApprovalRequired, "APPROVE backup pve1/qemu/101 storage=local mode=snapshot compress=zstd", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := backupEnv(t, tc.mod)
			_, err := e.client.BackupGuest(t.Context(), tc.in())
			assertRefusedNothingSent(t, e, err, tc.kind, tc.mention, tc.noReq)
		})
	}
}
