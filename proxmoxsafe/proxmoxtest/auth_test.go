package proxmoxtest

import "testing"

func TestAccessPermissions(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	s.AddToken("ops@pve!few", &Token{Secret: "x", Privileges: map[string][]string{"/vms": {"VM.Audit"}, "/vms/100": {"VM.PowerMgmt"}}})
	p := call(t, s, "GET", "/access/permissions", nil, "PVEAPIToken=ops@pve!few=x").body["data"].(map[string]any)
	vm := p["/vms/100"].(map[string]any)
	if vm["VM.Audit"] != 1.0 || vm["VM.PowerMgmt"] != 1.0 || len(p) != 2 {
		t.Errorf("permissions = %v", p)
	}
	root := get(t, s, "/access/permissions?path=/").body["data"].(map[string]any)["/"].(map[string]any)
	if len(root) != len(AllPrivileges()) {
		t.Errorf("default token has %d privileges on /", len(root))
	}
}
