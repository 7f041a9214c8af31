package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// apiRequestTool declares the api_request tool.
func apiRequestTool() toolDef {
	decl, _ := declaration(proxmoxsafe.OpAPIRequest)
	return classTool(ToolInfo{
		Name:  ToolAPIRequest,
		Title: "Proxmox API write",
		Description: "Send one POST, PUT or DELETE to an API path no dedicated tool covers (e.g. HA groups, pools, firewall rules); a write a tool covers is refused, naming it, as are set selectors (all, pool, exclude). " +
			fmt.Sprintf(classSays, decl.Class, approvalBy(decl.Class)) + " Path rules as api_get. Out of reach: users, tokens, ACLs, shells, consoles, agent exec, node power, cluster membership, storage definitions; " +
			"args, hookscripts, host devices, root-only parameters and secrets are never sent. Nodes, protected guests and pools are checked.",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpAPIRequest), (*adapter).apiRequest).without("plan.precheck")
}

func (a *adapter) apiRequest(ctx context.Context, in proxmoxsafe.APIRequestInput) (string, *proxmoxsafe.APIResult, error) {
	r, err := a.client.APIRequest(ctx, in)
	if err != nil {
		return "", nil, namingCoveringTools(in, err)
	}
	if r.Plan != nil && r.Plan.Approval == "" {
		return fmt.Sprintf("Plan only, nothing was sent: %s %s; a person approves it (levels %v), no phrase does", r.Method, r.Path, r.Plan.ApprovalLevels), r, nil
	}
	if r.Plan != nil {
		return fmt.Sprintf("Plan only, nothing was sent: %s %s; approve with exactly:\n%s", r.Method, r.Path, r.Plan.Approval), r, nil
	}
	return gatewayText(r), r, nil
}

// namingCoveringTools adds to the refusal of a write that a dedicated
// operation covers (the library names the operation) the tools that
// call that operation, which is what the model can use instead.
func namingCoveringTools(in proxmoxsafe.APIRequestInput, err error) error {
	var re *proxmoxsafe.RefusalError
	if !errors.As(err, &re) || !errors.Is(err, proxmoxsafe.ErrNotAllowed) {
		return err
	}
	ops := proxmoxsafe.GatewayCoveredBy(in)
	if len(ops) == 0 {
		return err
	}
	var names []string
	for _, d := range toolList() {
		if d.info.Name != ToolAPIRequest && slices.ContainsFunc(d.ops, func(o proxmoxsafe.Operation) bool { return slices.Contains(ops, o) }) {
			names = append(names, d.info.Name)
		}
	}
	if len(names) == 0 || !strings.Contains(re.Reason, string(ops[0])) {
		return err
	}
	return &proxmoxsafe.RefusalError{Kind: re.Kind, Reason: re.Reason + " (the tool: " + strings.Join(names, " or ") + ")", Plan: re.Plan}
}
