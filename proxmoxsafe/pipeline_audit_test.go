package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/auditlog"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/proxmoxtest"
)

func TestAuditFailureBlocksTheMutation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *proxmoxsafe.Config) { c.Audit = auditlog.New(failingWriter{}, nil) })
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrAudit) || !strings.Contains(err.Error(), "no action was taken") {
		t.Fatalf("err = %v, want ErrAudit", err)
	}
	if m := e.fake.MutatingRequests(); len(m) != 0 {
		t.Errorf("mutating requests after audit failure: %v", reqLines(m))
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestUpstreamRefusalIsAuditedAsFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.fake.InjectFault(proxmoxtest.Fault{Method: "POST", Path: "/nodes/pve1/qemu/100/status/stop", Status: 403, Reason: "Permission check failed (/vms/100, VM.PowerMgmt)"})
	_, err := e.client.GuestPower(t.Context(), powerIn("pve1", "qemu", 100, proxmoxsafe.ActionStop))
	if !errors.Is(err, proxmoxsafe.ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if !strings.Contains(err.Error(), "lacks privilege VM.PowerMgmt on /vms/100") {
		t.Errorf("403 not explained: %v", err)
	}
	if !strings.Contains(e.audit.String(), `"event":"failed"`) {
		t.Errorf("audit lacks the failed record:\n%s", e.audit.String())
	}
}
