package proxmoxsafe

import "testing"

// TestConfirmWord: a guest is confirmed by its VMID; a request that names
// no guest by its method and full path (not the method alone, which every
// write of that method shares); nothing to type without either.
func TestConfirmWord(t *testing.T) {
	gw := func(m, p string) *Plan { return &Plan{Class: ClassGatewayWrite, Method: m, Path: p} }
	for _, tc := range []struct {
		name       string
		t          Target
		p          *Plan
		word, what string
	}{
		{"guest", Target{Node: "pve1", Type: TypeQEMU, VMID: 101}, &Plan{Method: "POST", Path: "/nodes/pve1/qemu/101/status/shutdown"}, "101", "VMID"},
		{"snapshot", Target{Node: "pve1", Type: TypeLXC, VMID: 200, Snapshot: "pre"}, nil, "200", "VMID"},
		{"gateway write to a guest", Target{Node: "pve1", Type: TypeQEMU, VMID: 101}, gw("POST", "/nodes/pve1/qemu/101/snapshot"), "101", "VMID"},
		{"cluster", Target{}, gw("DELETE", "/cluster/ha/groups/web"), "DELETE /cluster/ha/groups/web", "request"},
		{"node", Target{}, gw("PUT", "/nodes/pve1/dns"), "PUT /nodes/pve1/dns", "request"},
		{"no plan", Target{}, nil, "", ""},
		{"empty plan", Target{}, &Plan{}, "", ""},
	} {
		word, what := ConfirmWord(tc.t, tc.p)
		if word != tc.word || what != tc.what {
			t.Errorf("%s: ConfirmWord = %q, %q; want %q, %q", tc.name, word, what, tc.word, tc.what)
		}
	}
}

// TestConfirmMatches: white space around and between the words does not
// count; anything else does, case included; an empty word matches
// nothing.
func TestConfirmMatches(t *testing.T) {
	const word = "DELETE /cluster/ha/groups/web"
	for _, typed := range []string{word, " " + word + "\n", "DELETE \t /cluster/ha/groups/web"} {
		if !ConfirmMatches(typed, word) {
			t.Errorf("%q does not match %q", typed, word)
		}
	}
	for _, typed := range []string{"DELETE", "/cluster/ha/groups/web", "web", "DELETE web", "delete /cluster/ha/groups/web",
		"DELETE /cluster/ha/groups/Web", "DELETE /cluster/ha/groups/web/", "DELETE/cluster/ha/groups/web", "DELETE /pools/web", ""} {
		if ConfirmMatches(typed, word) {
			t.Errorf("%q matches %q", typed, word)
		}
	}
	for _, typed := range []string{"", " "} {
		if ConfirmMatches(typed, "") {
			t.Errorf("%q matches the empty word", typed)
		}
	}
}
