package mcpserver

import "testing"

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
