package proxmoxsafe_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/retention"
)

func TestGuardPolicyErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		pol   proxmoxsafe.Policy
		field string
	}{
		{proxmoxsafe.Policy{ProtectedNames: []string{"db example"}}, "Policy.ProtectedNames"},
		{proxmoxsafe.Policy{ProtectedNames: []string{""}}, "Policy.ProtectedNames"},
		{proxmoxsafe.Policy{ProtectedTags: []string{"a;b"}}, "Policy.ProtectedTags"},
		{proxmoxsafe.Policy{ProtectedPools: []string{"../x"}}, "Policy.ProtectedPools"},
		{proxmoxsafe.Policy{Retention: retention.Policy{MaxAge: -time.Hour}}, "Policy.Retention"},
		{proxmoxsafe.Policy{Retention: retention.Policy{MaxCount: 5000}}, "Policy.Retention"},
		{proxmoxsafe.Policy{Classes: []proxmoxsafe.Class{"reset"}}, "Policy.Classes"},
	} {
		_, err := proxmoxsafe.New(proxmoxsafe.Config{URL: "https://pve.example:8006", TokenID: "u@pve!tok", TokenSecret: "s", Policy: tt.pol})
		var ce *proxmoxsafe.ConfigError
		if !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("%+v: err = %v, want a ConfigError on %s", tt.pol, err, tt.field)
		}
	}
}

// The transport guard lets the class's two QEMU routes through only when
// the class is enabled, and never the container ones.
func TestPowerExtraProfileAndClass(t *testing.T) {
	t.Parallel()
	classes, err := proxmoxsafe.ProfileAdmin.Classes()
	if err != nil || !slices.Contains(classes, proxmoxsafe.ClassPowerExtra) || !slices.Contains(classes, proxmoxsafe.ClassSnapshotAdmin) || slices.Contains(classes, proxmoxsafe.ClassResponder) {
		t.Errorf("admin profile classes = %v, %v", classes, err)
	}
	for _, p := range []proxmoxsafe.Profile{proxmoxsafe.ProfileSafe, proxmoxsafe.ProfileResponder, proxmoxsafe.ProfileReadOnly} {
		cl, _ := p.Classes()
		if slices.Contains(cl, proxmoxsafe.ClassPowerExtra) {
			t.Errorf("profile %s enables power-extra", p)
		}
	}
}
