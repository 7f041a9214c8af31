package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDestroyAdminDefaults: the admin profile with no
// PROXMOX_SAFE_APPROVALS offers guest_destroy behind the grant level for
// a client that cannot elicit: the exact phrase does not approve it, the
// refusal carries a grant code, the operator approves it with "approve
// CODE" from the same grant directory, and the repeated call then
// submits the qmdestroy task, once.
func TestDestroyAdminDefaults(t *testing.T) {
	t.Parallel()
	env := map[string]string{"XDG_STATE_HOME": t.TempDir(), "PROXMOX_SAFE_GRANT_DIR": t.TempDir(), "USER": "tester"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	runWith := func(stdin string, args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := run(t.Context(), args, lookup, strings.NewReader(stdin), &out, &errOut)
		return out.String(), errOut.String(), code
	}
	args := `{"node":"pve2","type":"qemu","vmid":103,"purge":false,"destroy_unreferenced_disks":false,"approval":"APPROVE destroy pve2/qemu/103 purge=0 destroy-unreferenced-disks=0"}`
	out, errOut, code := runWith("", "--demo", "--profile", "admin", "call", "guest_destroy", args)
	m := grantCodeRe.FindStringSubmatch(out + errOut)
	if code == 0 || m == nil || !strings.Contains(out+errOut, `the approval phrase given does not approve the "destroy" class`) || strings.Contains(out, "UPID:") {
		t.Fatalf("phrase with the default levels: exit %d\n%s\n%s", code, out, errOut)
	}
	grant := m[1]
	out, errOut, code = runWith(grant+"\n", "approve", grant)
	if code != 0 {
		t.Fatalf("approve: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Action:  destroy", "Target:  pve2/qemu/103", "Params:  purge=0 destroy-unreferenced-disks=0", "scsi0 local-lvm:vm-103-disk-0 (100G)", "Approved " + grant} {
		if !strings.Contains(out, want) {
			t.Errorf("approve output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = runWith("", "--demo", "--profile", "admin", "call", "guest_destroy", args)
	if code != 0 || !strings.Contains(out, "UPID:") || !strings.Contains(out, ":qmdestroy:103:") {
		t.Fatalf("approved call: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runWith("", "--demo", "--profile", "admin", "call", "guest_destroy", args)
	if code == 0 || strings.Contains(out, "UPID:") {
		t.Fatalf("the used grant approved a second call: exit %d\n%s\n%s", code, out, errOut)
	}
}
