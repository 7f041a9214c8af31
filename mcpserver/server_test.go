package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

// TestInstructions: go-sdk delivers the composed instructions in the
// initialize answer on every protocol version (2026-07-28 through
// server/discover), and they say what the listed tools share: nothing
// about approvals for a read-only server, the phrase and the wait for
// power and snapshot, a person's approval for destroy, what a new guest's
// VMID is only where a tool creates one.
func TestInstructions(t *testing.T) {
	t.Parallel()
	adminClasses, _ := proxmoxsafe.ProfileAdmin.Classes()
	admin := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: adminClasses,
		Approvals: map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassDestroy: {proxmoxsafe.LevelPhrase}}}
	responder := proxmoxsafe.Policy{AllowedNodes: []string{"pve1"}, Classes: []proxmoxsafe.Class{proxmoxsafe.ClassResponder}}
	wait := fmt.Sprintf(instructionsWait, waitBounds(proxmoxsafe.DefaultMaxWait))
	for _, tc := range []struct {
		name         string
		cfg          fixtureConfig
		want, absent []string
	}{
		{"readonly", fixtureConfig{opts: Options{ReadOnly: true}}, []string{instructionsHead, instructionsReads}, []string{"approval", "receipt"}},
		{"safe", fixtureConfig{}, []string{instructionsMutations, instructionsPhrase, wait}, []string{instructionsPerson, instructionsNone, instructionsNewGuest}},
		{"responder", fixtureConfig{policy: &responder}, []string{"The responder class's tools" + instructionsNone, wait}, []string{instructionsPerson}},
		{"admin", fixtureConfig{policy: &admin}, []string{"The destroy class's tools" + instructionsPerson, instructionsPhrase, instructionsNewGuest, wait}, []string{instructionsNone}},
	} {
		for _, pv := range protocols {
			t.Run(tc.name+"/"+protoName(pv), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, t.Context(), pv, tc.cfg)
				got := f.cs.InitializeResult()
				if want := ServerInstructions(f.client, &tc.cfg.opts); got.Instructions != want {
					t.Errorf("instructions = %q, want ServerInstructions' %q", got.Instructions, want)
				}
				for _, s := range tc.want {
					if !strings.Contains(got.Instructions, s) {
						t.Errorf("instructions lack %q:\n%s", s, got.Instructions)
					}
				}
				for _, s := range tc.absent {
					if strings.Contains(got.Instructions, s) {
						t.Errorf("instructions say %q:\n%s", s, got.Instructions)
					}
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
