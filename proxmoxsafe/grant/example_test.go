package grant_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe/grant"
)

// A client whose power class an operator approves out of band: the first
// call is refused with a code, the operator approves it (here in-process;
// the binary's "proxmox-safe-mcp approve CODE" does the same from another
// shell), and the same call repeated runs once.
func Example() {
	dir, _ := os.MkdirTemp("", "grants")
	defer os.RemoveAll(dir)
	store, err := grant.Open(filepath.Join(dir, "grants"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := proxmoxsafe.Config{
		// URL, token, Audit, … as usual.
		Policy: proxmoxsafe.Policy{
			AllowedNodes: []string{"pve1"},
			Classes:      []proxmoxsafe.Class{proxmoxsafe.ClassPower},
			Approvals:    map[proxmoxsafe.Class][]proxmoxsafe.ApprovalLevel{proxmoxsafe.ClassPower: {proxmoxsafe.LevelGrant}},
		},
		Approvers: []proxmoxsafe.Approver{store},
	}
	_ = cfg // proxmoxsafe.New(cfg); client.GuestPower(ctx, in) asks the store:
	err = store.Approve(context.Background(), proxmoxsafe.ApprovalRequest{Action: "shutdown", Target: proxmoxsafe.Target{Node: "pve1", Type: "qemu", VMID: 100}})
	var required *grant.RequiredError
	if errors.As(err, &required) {
		g, _ := store.Decide(required.Grant.Code, true, "alice")
		fmt.Println(g.Status, g.Operator)
	}
	// Output: approved alice
}
