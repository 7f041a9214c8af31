// Package mcpserver turns a [proxmoxsafe.Client] into Model Context Protocol
// tools, using the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// It is a thin adapter: every safety decision (validation, policy,
// preconditions, approval, audit) is made by proxmoxsafe. This package adds
// what only an MCP server can do:
//
//   - one explicit list of tools ([Tools]) with input schemas that carry
//     Proxmox's real constraints, typed output schemas and all four tool
//     annotations set explicitly;
//   - only the tools the client's policy enables are registered, so a
//     mutation class the operator did not enable is not even visible;
//     [Options.ReadOnly] hides every mutation tool on top of that;
//   - results carry typed structuredContent plus one short, sanitized text;
//     refusals are tool errors (isError) that say why and that nothing was
//     done, and an approval refusal names the exact phrase, the guest's
//     current state and the effect, so a human reading the transcript
//     knows what they approve;
//   - a recovering middleware ([RecoverMiddleware]) so a bug in a handler
//     becomes a tool error instead of killing the process, and one log line
//     per tool call ([LoggingMiddleware]).
//
// Use [New] for a standalone server, or [AddTools] to mount the tools into an
// existing go-sdk server.
package mcpserver
