package mcpserver

import (
	"context"
	"fmt"

	"github.com/proxmoxsafe/proxmox-safe-mcp/proxmoxsafe"
)

// apiRequestTool declares the api_request tool.
func apiRequestTool() toolDef {
	decl := declarations()[proxmoxsafe.OpAPIRequest]
	return classTool(ToolInfo{
		Name:  ToolAPIRequest,
		Title: "Proxmox API write",
		Description: "Send one POST, PUT or DELETE to a Proxmox VE API path for what no dedicated tool covers (e.g. HA groups, pools, guest firewall rules), with params as the form (POST, PUT) or query (DELETE). " +
			"Same path rules as api_get. Refused (nothing is sent) unless the operator enabled the " + string(decl.Class) + " class, which no profile enables; never reachable even then: user, token, ACL and TFA changes, node shells, consoles and execute, guest agent exec and file access, node power, cluster membership, storage definitions and volumes (the deny list). A node in the path or in target/node must be on the allowlist; a protected guest or pool is refused; args, hookscript, host devices and host paths, parameters Proxmox allows to root only (vzdump script/tmpdir/dumpdir, start internals, skiplock) and secrets (any parameter api_get would redact: passwords, tokens, keys, sshkeys, …) are never sent, so the person approving sees every value. " +
			"Needs approval bound to the exact method, path and parameters: by default a person approves (elicitation or an operator grant); where the operator chose the phrase it is \"" + decl.ApprovalFormat + "\" — call without approval (or with plan: true) first and show the user the refusal, which names the exact phrase and what will be sent. " +
			"Every attempt is audited before anything is sent. Returns Proxmox's answer like api_get, and upid when a task started.",
		Annotations: powerAnnotations,
	}, ops(proxmoxsafe.OpAPIRequest), (*adapter).apiRequest)
}

func (a *adapter) apiRequest(ctx context.Context, in proxmoxsafe.APIRequestInput) (string, *proxmoxsafe.APIResult, error) {
	r, err := a.client.APIRequest(ctx, in)
	if err != nil {
		return "", nil, err
	}
	if r.Plan != nil {
		return fmt.Sprintf("Plan only, nothing was sent: %s %s; approve with exactly:\n%s", r.Method, r.Path, r.Plan.Approval), r, nil
	}
	return gatewayText(r), r, nil
}
