// Third-party client for ci/chart-smoke.sh: the TypeScript MCP SDK (pinned
// there) over stdio calls metrics_chart and prints one JSON line: the tool
// list entry and each content's type, MIME type and size, and the image's
// PNG signature and dimensions as the SDK handed them over (base64 data).
//
//   node chart-client.mjs <server-binary> [server args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "ci-chart-client", version: "0.1.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools;
const tool = tools.find((t) => t.name === "metrics_chart");
const res = await client.callTool({ name: "metrics_chart",
  arguments: { node: "pve1", type: "qemu", vmid: 100, timeframe: "day" } });
const contents = (res.content || []).map((c) => {
  if (c.type !== "image") return { type: c.type, text: c.text };
  const png = Buffer.from(c.data, "base64");
  return { type: c.type, mimeType: c.mimeType, bytes: png.length,
    signature: png.subarray(0, 8).toString("hex"),
    width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
});
console.log(JSON.stringify({ listed: !!tool, hasOutputSchema: !!(tool && tool.outputSchema),
  isError: !!res.isError, structured: res.structuredContent !== undefined, contents }));
await client.close();
