package grant_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// codeFormat is the documented code format: 8 characters of Crockford's
// base32 (no I, L, O, U) as XXXX-XXXX.
var codeFormat = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$`)

// ask asks store for req and returns the pending grant it refuses with.
func ask(t *testing.T, store *grant.Store, req proxmoxsafe.ApprovalRequest) grant.Grant {
	t.Helper()
	var gr *grant.RequiredError
	if err := store.Approve(t.Context(), req); !errors.As(err, &gr) {
		t.Fatalf("Approve: %v, want a grant refusal", err)
	}
	return gr.Grant
}

func shutdownReq(vmid int) proxmoxsafe.ApprovalRequest {
	return proxmoxsafe.ApprovalRequest{
		Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: vmid},
		State: proxmoxsafe.GuestState{Status: "running", QMPStatus: "paused", Name: "web1", HAManaged: true, HAState: "started"}, Effect: "shut down VM 100",
	}
}

// TestCodeFormat: codes have the documented format, differ between
// requests, and are found again when typed in lower case or with spaces
// around them.
func TestCodeFormat(t *testing.T) {
	t.Parallel()
	store := openStore(t, t.TempDir())
	seen := map[string]bool{}
	for vmid := 100; vmid < 120; vmid++ {
		g := ask(t, store, shutdownReq(vmid))
		if !codeFormat.MatchString(g.Code) || seen[g.Code] {
			t.Fatalf("code %q: bad format or repeated", g.Code)
		}
		seen[g.Code] = true
		if got, err := store.Get("  " + strings.ToLower(g.Code) + "\n"); err != nil || got.Code != g.Code {
			t.Fatalf("Get of the typed code: %+v %v", got, err)
		}
	}
}

// TestGrantFile: the grant file is the Grant's JSON, holding what the
// operator is shown (action, target, parameters, effect, the state as a
// refusal shows it) and the binding, never the phrase given.
func TestGrantFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := openStore(t, dir)
	req := shutdownReq(100)
	req.Params = []proxmoxsafe.ApprovalParam{{Name: "forceStop", Value: "1"}}
	req.Given = "APPROVE shutdown pve1/qemu/100 forceStop=1"
	req.Arguments = "args-digest"
	g := ask(t, store, req)
	raw, err := os.ReadFile(filepath.Join(dir, g.Code+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"code": g.Code, "action": "shutdown", "status": "pending", "arguments": "args-digest",
		"effect": "shut down VM 100", "state": "running (paused), HA-managed (started)",
		"params": []any{"forceStop=1"}, "target": map[string]any{"node": "pve1", "type": "qemu", "vmid": float64(100)},
	} {
		if got, _ := json.Marshal(m[key]); string(got) != mustJSON(t, want) {
			t.Errorf("%s = %s, want %s", key, got, mustJSON(t, want))
		}
	}
	if b, _ := m["binding"].(string); len(b) != 64 {
		t.Errorf("binding %q, want a hex SHA-256", b)
	}
	if strings.Contains(string(raw), "APPROVE") {
		t.Errorf("the grant file holds the phrase: %s", raw)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
