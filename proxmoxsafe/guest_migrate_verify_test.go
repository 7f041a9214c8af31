package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// Verify refuses a migration receipt without a valid target node, before
// reading anything.
func TestMigrateVerifyNeedsTargetNode(t *testing.T) {
	t.Parallel()
	e := newMigrateEnv(t, "", nil)
	r := &proxmoxsafe.Receipt{UPID: "UPID:pve1:00001F41:0000D071:5FBE5E6D:qmigrate:100:automation@pve!mcp:", Action: "migrate",
		Target: guestTarget("pve1", "qemu", 100)}
	_, err := e.client.Verify(t.Context(), r, fastVerify())
	if !errors.Is(err, proxmoxsafe.ErrInvalidInput) || !strings.Contains(err.Error(), "target_node") {
		t.Errorf("err = %v", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}
