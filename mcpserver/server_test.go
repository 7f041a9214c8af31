package mcpserver

import (
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestInstructions(t *testing.T) {
	t.Parallel()
	for _, pv := range protocols {
		t.Run(protoName(pv), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, t.Context(), pv, fixtureConfig{})
			got := f.cs.InitializeResult()
			if got.Instructions != Instructions {
				t.Errorf("instructions = %q, want the static Instructions", got.Instructions)
			}
			if got.ServerInfo.Name != ServerName || got.ServerInfo.Version != "dev" {
				t.Errorf("server info = %+v, want %s dev", got.ServerInfo, ServerName)
			}
			if len(f.fake.Requests()) != 0 {
				t.Errorf("initialization sent requests to Proxmox: %v", requestLines(f.fake.Requests()))
			}
		})
	}
}

// TestServerTitleNamesPolicy: the title a client shows beside the server
// names the policy in force; "(safe)" on an admin server would tell a
// person choosing among servers that it can change less than it can.
func TestServerTitleNamesPolicy(t *testing.T) {
	t.Parallel()
	fake := proxmoxtest.NewServer(nil)
	t.Cleanup(fake.Close)
	profile := func(p proxmoxsafe.Profile, extra ...proxmoxsafe.Class) []proxmoxsafe.Class {
		classes, err := p.Classes()
		if err != nil {
			t.Fatal(err)
		}
		return append(classes, extra...)
	}
	for _, tc := range []struct {
		classes  []proxmoxsafe.Class
		readOnly bool
		want     string
	}{
		{nil, false, "Proxmox VE (read-only)"},
		{profile(proxmoxsafe.ProfileSafe), true, "Proxmox VE (read-only)"},
		{profile(proxmoxsafe.ProfileSafe), false, "Proxmox VE (safe)"},
		{profile(proxmoxsafe.ProfileResponder), false, "Proxmox VE (responder)"},
		{profile(proxmoxsafe.ProfileAdmin), false, "Proxmox VE (admin)"},
		{profile(proxmoxsafe.ProfileAdmin, proxmoxsafe.ClassGatewayWrite), false, "Proxmox VE (admin + gateway-write)"},
		{[]proxmoxsafe.Class{proxmoxsafe.ClassPower}, false, "Proxmox VE (custom policy)"},
	} {
		pol := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: tc.classes, ReadOnly: tc.readOnly,
			// The classes a person approves by default need an approver; a phrase stands in.
			Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}, proxmoxsafe.ClassGatewayWrite: {proxmoxsafe.LevelPhrase}}}
		client := newClient(t, fake, pol, "", &memAudit{}, nil)
		if got := New(client, nil); got == nil {
			t.Fatal("nil server")
		}
		if got := serverTitle(client, &Options{}); got != tc.want {
			t.Errorf("classes %v read-only %v: title %q, want %q", tc.classes, tc.readOnly, got, tc.want)
		}
	}
	safe := newClient(t, fake, proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: profile(proxmoxsafe.ProfileSafe)}, "", &memAudit{}, nil)
	if got := serverTitle(safe, &Options{ReadOnly: true}); got != "Proxmox VE (read-only)" {
		t.Errorf("Options.ReadOnly: title %q", got)
	}
}
