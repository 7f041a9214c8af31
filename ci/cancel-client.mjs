// Third-party cancellation client for ci/cancel-smoke.sh: the TypeScript MCP
// SDK (pinned there) cancels a slow tool call (AbortSignal, which sends
// notifications/cancelled) and reports whether the server still answered
// it: the SDK reports an answer to a request it cancelled through
// client.onerror ("Received a response for an unknown message ID").
// It prints one JSON line and exits 1 on any such answer or error.
//
//   node cancel-client.mjs <server-binary> [server args...]   (stdio)
//   MCP_TOKEN=… node cancel-client.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [target, ...args] = process.argv.slice(2);
const http = target.startsWith("http");
const transport = http
  ? new StreamableHTTPClientTransport(new URL(target),
      { requestInit: { headers: { Authorization: `Bearer ${process.env.MCP_TOKEN ?? ""}` } } })
  : new StdioClientTransport({ command: target, args, stderr: "inherit" });
// The SDK hands the negotiated version to transports that take it (HTTP);
// note it for stdio too.
let negotiated = "";
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };
const client = new Client({ name: "ci-cancel-client", version: "0.1.0" });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
await client.connect(transport);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const cancelled = [];
// Two slow calls, each cancelled half a second in: the demo's HA-managed
// guest 101 shut down and started again, each waiting for its task (an HA
// task runs for seconds in the demo). Each is audited as submitted.
for (const action of ["shutdown", "start"]) {
  const ac = new AbortController();
  const call = client.callTool({ name: "guest_power", arguments: {
    node: "pve1", type: "qemu", vmid: 101, action, wait: true,
    approval: `APPROVE ${action} pve1/qemu/101` } }, undefined, { signal: ac.signal, timeout: 60000 });
  setTimeout(() => ac.abort("the interop check cancels"), 500);
  try { cancelled.push("completed, not cancelled: " + JSON.stringify(await call)); }
  catch (e) { cancelled.push(String(e?.message ?? e)); }
  await sleep(4000); // past the task (3 s): a late answer would have come by now
}
const later = await client.callTool({ name: "list_guests", arguments: {} });
const unknown = errors.filter((e) => /unknown message id/i.test(e));
const report = {
  transport: http ? "http" : "stdio",
  protocol: negotiated,
  server: client.getServerVersion(),
  cancelled,
  answersToCancelledRequests: unknown.length,
  errors,
  laterCallAnswered: later.isError !== true,
};
console.log(JSON.stringify(report));
await client.close();
process.exitCode = unknown.length === 0 && errors.length === 0 && report.laterCallAnswered
  && cancelled.every((c) => !c.startsWith("completed")) ? 0 : 1;
