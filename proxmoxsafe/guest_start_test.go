package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestStartGuest(t *testing.T) {
	t.Parallel()
	e := newResponderEnv(t, nil)
	r, err := e.client.StartGuest(t.Context(), guarded(107, "qemu", "start"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Task.Type != "qmstart" {
		t.Errorf("task type %s", r.Task.Type)
	}
	// Without the responder class nothing guarded runs.
	p := newResponderEnv(t, func(c *proxmoxsafe.Config) { c.Policy.Classes = []proxmoxsafe.Class{proxmoxsafe.ClassPower} })
	if _, err := p.client.StartGuest(t.Context(), guarded(107, "qemu", "start")); !errors.Is(err, proxmoxsafe.ErrNotAllowed) || !strings.Contains(err.Error(), `"responder"`) {
		t.Errorf("start without the class: %v", err)
	}
	if len(p.requests()) != 0 {
		t.Errorf("requests without the class: %v", reqLines(p.requests()))
	}
}
