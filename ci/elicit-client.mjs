// Third-party elicitation client for ci/elicit-smoke.sh: the TypeScript MCP
// SDK (pinned there) over stdio, with an elicitation handler that plays the
// person at the client. It prints one JSON line: what the person was shown
// and the tool result.
//
//   node elicit-client.mjs <answer> <server-binary> [server args...]
//   answer: "type:<text>" (accept, typing <text>), "decline" or "cancel"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [answer, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "ci-elicit-client", version: "0.1.0" },
  { capabilities: { elicitation: { form: {} } } });
const seen = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  seen.push(req.params);
  if (answer.startsWith("type:")) return { action: "accept", content: { confirm: answer.slice(5) } };
  return { action: answer };
});
await client.connect(transport);
const res = await client.callTool({ name: "guest_power",
  arguments: { node: "pve1", type: "qemu", vmid: 100, action: "shutdown" } });
console.log(JSON.stringify({ seen, result: res }));
await client.close();
