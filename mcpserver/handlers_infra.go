package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

func (a *adapter) storageList(ctx context.Context, in proxmoxsafe.ListStorageInput) (string, *proxmoxsafe.ListStorageResult, error) {
	res, err := a.client.ListStorage(ctx, in)
	if err != nil {
		return "", nil, err
	}
	inactive := 0
	for _, s := range res.Storages {
		if !s.Active {
			inactive++
		}
	}
	where := "cluster-wide"
	if res.Scope == "node" {
		where = "on " + in.Node
	}
	text := fmt.Sprintf("Listed %d of %d storage entries %s", len(res.Storages), res.Total, where)
	if inactive > 0 {
		text += fmt.Sprintf("; %d not active", inactive)
	}
	return text, res, nil
}

func (a *adapter) backupList(ctx context.Context, in proxmoxsafe.ListBackupsInput) (string, *proxmoxsafe.ListBackupsResult, error) {
	res, err := a.client.ListBackups(ctx, in)
	if err != nil {
		return "", nil, err
	}
	if res.Total == 0 {
		return fmt.Sprintf("No backups on %s as seen from %s (Proxmox hides backups the token may not access: see permissions_check)",
			clean(res.Storage, 64), clean(res.Node, 64)), res, nil
	}
	text := fmt.Sprintf("Listed %d of %d backups on %s as seen from %s", len(res.Backups), res.Total, clean(res.Storage, 64), clean(res.Node, 64))
	if b := res.Backups[0]; !b.Time.IsZero() {
		text += ", newest " + b.Time.Format("2006-01-02 15:04 UTC")
	}
	return text, res, nil
}

func (a *adapter) cephStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.CephStatusResult, error) {
	res, err := a.client.CephStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	if !res.Installed {
		return clean(res.Message, 256), res, nil
	}
	text := fmt.Sprintf("Ceph %s: %d/%d monitors in quorum, OSDs %d up / %d in of %d, %d PGs, %s of %s used",
		clean(res.Health, 32), len(res.Monitors.InQuorum), res.Monitors.Count, res.OSDs.Up, res.OSDs.In, res.OSDs.Total,
		res.PGs.Total, gib(res.Usage.Used), gib(res.Usage.Total))
	if res.ChecksTotal > 0 {
		var codes []string
		for _, c := range res.Checks[:min(len(res.Checks), 5)] {
			codes = append(codes, clean(c.Code, 64))
		}
		text += "; checks: " + strings.Join(codes, ", ")
	}
	return text, res, nil
}

func (a *adapter) haStatus(ctx context.Context, _ noArgs) (string, *proxmoxsafe.HAStatusResult, error) {
	res, err := a.client.HAStatus(ctx)
	if err != nil {
		return "", nil, err
	}
	quorum := "quorate"
	if !res.Quorate {
		quorum = "NOT quorate"
	}
	if !res.InUse {
		return "HA is not in use (no HA resources); cluster " + quorum, res, nil
	}
	states := map[string]int{}
	for _, s := range res.Services {
		states[clean(s.State, 32)]++
	}
	var parts []string
	for _, st := range sortedKeysOf(states) {
		parts = append(parts, fmt.Sprintf("%d %s", states[st], st))
	}
	manager := "no active manager"
	if res.Manager.Node != "" {
		manager = "manager on " + clean(res.Manager.Node, 64)
	}
	return fmt.Sprintf("HA %s, %s; %d resources: %s", quorum, manager, res.Total, strings.Join(parts, ", ")), res, nil
}

func sortedKeysOf(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// permissionsCheck checks the token against the tools this server offers:
// the same list tools/list shows, so a read-only server does not ask for
// VM.PowerMgmt.
func (a *adapter) permissionsCheck(ctx context.Context, _ noArgs) (string, *PermissionsCheckResult, error) {
	res, err := CheckPermissions(ctx, a.client, &Options{ReadOnly: a.readOnly})
	if err != nil {
		return "", nil, err
	}
	return PermissionsSummary(res), res, nil
}

// CheckPermissions compares the token's privileges with what each tool
// [Tools] offers for client and opts needs (see [ToolOperations]). The
// binary's doctor and startup check use it too.
func CheckPermissions(ctx context.Context, client *proxmoxsafe.Client, opts *Options) (*PermissionsCheckResult, error) {
	// The enabled declarations, not Tools: their schemas are not needed here.
	o := opts.orDefault()
	var tools []toolDef
	var ops []proxmoxsafe.Operation
	for _, d := range toolList() {
		if !d.enabled(client, o) {
			continue
		}
		tools = append(tools, d)
		for _, op := range d.ops {
			if !slices.Contains(ops, op) {
				ops = append(ops, op)
			}
		}
	}
	rep, err := client.PermissionsFor(ctx, ops)
	if err != nil {
		return nil, err
	}
	out := &PermissionsCheckResult{
		TokenID: rep.TokenID, OK: rep.OK, Tools: []ToolPermission{}, Missing: rep.Missing, Excess: rep.Excess,
		Dangerous: rep.Dangerous, RoleCommand: rep.RoleCommand, OptionalRoleCommand: rep.OptionalRoleCommand,
		Privileges: rep.Privileges, PathsTotal: rep.PathsTotal, Notes: rep.Notes,
	}
	for _, d := range tools {
		tp := ToolPermission{Tool: d.info.Name, OK: true, Checks: []proxmoxsafe.PrivilegeCheck{}}
		for _, ch := range rep.Checks {
			if slices.Contains(d.ops, ch.Operation) {
				tp.Checks = append(tp.Checks, ch)
				if ch.Status == "missing" && !ch.Optional {
					tp.OK = false
				}
			}
		}
		out.Tools = append(out.Tools, tp)
	}
	return out, nil
}

// PermissionsSummary is the one-paragraph human text of a permissions check.
func PermissionsSummary(r *PermissionsCheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Token %s: ", r.TokenID)
	var broken []string
	for _, t := range r.Tools {
		if !t.OK {
			broken = append(broken, t.Tool)
		}
	}
	if len(broken) == 0 {
		fmt.Fprintf(&b, "every offered tool (%d) has the privileges it requires.", len(r.Tools))
	} else {
		fmt.Fprintf(&b, "%d of %d tools lack privileges (%s).", len(broken), len(r.Tools), toolNames(broken))
	}
	for _, m := range r.Missing {
		if m.Optional {
			continue
		}
		fmt.Fprintf(&b, "\nMissing %s on %s: %s", strings.Join(m.Privileges, ", "), m.Path, m.Command)
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "\nCreate the role first: %s", r.RoleCommand)
	}
	var danger, other []string
	for _, x := range r.Excess {
		if x.Dangerous {
			danger = append(danger, x.Privilege)
		} else {
			other = append(other, x.Privilege)
		}
	}
	if len(danger) > 0 {
		fmt.Fprintf(&b, "\nWARNING: the token holds dangerous privileges no tool needs: %s", strings.Join(danger, ", "))
	}
	if len(other) > 0 {
		fmt.Fprintf(&b, "\nAlso held beyond need: %d privileges", len(other))
	}
	return b.String()
}
