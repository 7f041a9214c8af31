package proxmoxsafe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func TestReadRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := t.Context()
	checks := []struct {
		name string
		call func() error
		kind error
	}{
		{"node status bad node", func() error {
			_, err := e.client.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "../x"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"node status not allowlisted", func() error {
			_, err := e.client.NodeStatus(ctx, proxmoxsafe.NodeStatusInput{Node: "pve3"})
			return err
		}, proxmoxsafe.ErrNotAllowed},
		{"list bad limit", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Limit: 1001})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list negative limit", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Limit: -1})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad type", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Type: "vm"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad status", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Status: "paused"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list bad tag", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Tag: "a;b"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list forged cursor", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Cursor: "djE6OTk"}) // "v1:99"
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"list garbage cursor", func() error {
			_, err := e.client.ListGuests(ctx, proxmoxsafe.ListGuestsInput{Cursor: "!!"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task bad upid", func() error {
			_, err := e.client.TaskState(ctx, proxmoxsafe.TaskStateInput{Node: "pve1", UPID: "UPID:../../etc"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task node mismatch", func() error {
			_, err := e.client.TaskState(ctx, proxmoxsafe.TaskStateInput{Node: "pve2", UPID: "UPID:pve1:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:"})
			return err
		}, proxmoxsafe.ErrInvalidInput},
		{"task node not allowlisted", func() error {
			_, err := e.client.TaskState(ctx, proxmoxsafe.TaskStateInput{Node: "pve3", UPID: "UPID:pve3:00001234:00005678:5FBE5E6D:qmstart:100:root@pam:"})
			return err
		}, proxmoxsafe.ErrNotAllowed},
		{"wait bad upid", func() error {
			_, err := e.client.WaitTask(ctx, proxmoxsafe.WaitTaskInput{UPID: "nope"}, nil)
			return err
		}, proxmoxsafe.ErrInvalidInput},
	}
	for _, c := range checks {
		err := c.call()
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		}
	}
	if r := e.requests(); len(r) != 0 {
		t.Errorf("refused reads sent requests: %v", reqLines(r))
	}
}

// TestInfraRefusals: invalid input and policy refusals send nothing.
func TestInfraRefusals(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, infraCluster(), nil)
	tests := []struct {
		name string
		call func() error
		kind error
		want string
	}{
		{"storage node not allowlisted", func() error {
			_, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{Node: "pve3"})
			return err
		}, proxmoxsafe.ErrNotAllowed, `node "pve3" is not on the node allowlist`},
		{"storage bad node", func() error {
			_, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{Node: "pve1/../access"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "node"},
		{"storage limit", func() error {
			_, err := e.client.ListStorage(t.Context(), proxmoxsafe.ListStorageInput{Limit: 1001})
			return err
		}, proxmoxsafe.ErrInvalidInput, "limit"},
		{"backups node not allowlisted", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve3", Storage: "local"})
			return err
		}, proxmoxsafe.ErrNotAllowed, "allowlist"},
		{"backups no node", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Storage: "local"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "node: is required"},
		{"backups no storage", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "storage: is required"},
		{"backups storage traversal", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local/../../access"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "storage: must be a Proxmox storage id"},
		{"backups storage one char", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "a"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "storage"},
		{"backups storage too long", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "a" + strings.Repeat("b", 64)})
			return err
		}, proxmoxsafe.ErrInvalidInput, "storage"},
		{"backups vmid", func() error {
			_, err := e.client.ListBackups(t.Context(), proxmoxsafe.ListBackupsInput{Node: "pve1", Storage: "local", VMID: 99})
			return err
		}, proxmoxsafe.ErrInvalidInput, "vmid"},
		{"permissions unknown operation", func() error {
			_, err := e.client.PermissionsFor(t.Context(), []proxmoxsafe.Operation{"DeleteEverything"})
			return err
		}, proxmoxsafe.ErrInvalidInput, "unknown operation"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.requests())
			err := tc.call()
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "no action was taken") {
				t.Errorf("err = %v, want %v mentioning %q", err, tc.kind, tc.want)
			}
			if n := len(e.requests()); n != before {
				t.Errorf("%d requests sent, want none", n-before)
			}
		})
	}
}
