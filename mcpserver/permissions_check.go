package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// permissionsCheckTool declares the permissions_check tool.
func permissionsCheckTool() toolDef {
	return readTool(ToolInfo{
		Name:        ToolPermissionsCheck,
		Title:       "Check token permissions",
		Description: "The token's privileges against what each offered tool needs: pveum commands for what is missing, and dangerous excess.",
	}, ops(proxmoxsafe.OpPermissions), (*adapter).permissionsCheck, func() map[string]string {
		return map[string]string{
			"ok":           "True when every offered tool has what it requires (optional privileges and excess do not count).",
			"tools":        "Per offered tool: the privilege checks of the library operations it calls.",
			"missing":      "What to grant, per ACL path, with the pveum commands (create the role first with role_command).",
			"excess":       "Privileges held that no offered tool needs, dangerous ones first.",
			"role_command": "Creates the role with exactly the required privileges.",
		}
	})
}

// PermissionsCheckResult is permissions_check's structured output (and
// what [CheckPermissions] returns): the library report, plus what each
// offered tool needs.
type PermissionsCheckResult struct {
	TokenID string `json:"token_id"`
	// OK is true when every enabled tool has what it requires.
	OK    bool             `json:"ok"`
	Tools []ToolPermission `json:"tools"`
	// Missing, Excess and the role commands come from the library report.
	Missing             []proxmoxsafe.MissingGrant    `json:"missing"`
	Excess              []proxmoxsafe.ExcessPrivilege `json:"excess"`
	Dangerous           bool                          `json:"dangerous"`
	RoleCommand         string                        `json:"role_command"`
	OptionalRoleCommand string                        `json:"optional_role_command,omitempty"`
	Privileges          []proxmoxsafe.PathPrivileges  `json:"privileges"`
	PathsTotal          int                           `json:"paths_total"`
	Notes               []string                      `json:"notes"`
}

// ToolPermission is what one offered tool needs and whether the token has it.
type ToolPermission struct {
	Tool string `json:"tool"`
	// OK is true when nothing this tool requires is missing.
	OK bool `json:"ok"`
	// Checks are "held", "partial" or "missing" per privilege and ACL path.
	Checks []proxmoxsafe.PrivilegeCheck `json:"checks"`
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

// toolNames renders tool names for a sentence.
func toolNames(names []string) string { return strings.Join(names, ", ") }
