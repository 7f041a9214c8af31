// Third-party host for ci/apps-smoke.sh: the official MCP Apps host SDK
// (@modelcontextprotocol/ext-apps's AppBridge, pinned there) renders
// metrics_chart's ui:// view in headless Chromium, as a host that supports
// MCP Apps does, with the built binary behind it over stdio (the
// TypeScript MCP SDK's client). It prints one JSON line of what it saw.
//
//   node apps-host.mjs <chromium> <server-binary> [server args...]
//
// The host: tools/list gives the tool's resource URI (ext-apps'
// getToolUiResourceUri), resources/read the HTML and its _meta.ui.csp;
// the page is served from loopback under the CSP the spec builds from that
// declaration, in an iframe sandboxed to allow-scripts; AppBridge answers
// ui/initialize (offering serverTools), gets the tool input and result
// after ui/notifications/initialized, sizes the frame from size-changed
// and forwards the view's tools/call to the server. Playwright reads the
// view's DOM and presses "week".
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getToolUiResourceUri, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import * as esbuild from "esbuild";
import { chromium } from "playwright-core";

const [chromiumPath, command, ...args] = process.argv.slice(2);
const out = { forwarded: [], log: [] };
const fail = (why) => { out.error = why; console.log(JSON.stringify(out)); process.exit(1); };

const client = new Client({ name: "ci-apps-host", version: "0.1.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const tool = (await client.listTools()).tools.find((t) => t.name === "metrics_chart");
if (!tool) fail("metrics_chart is not listed");
out.resourceUri = getToolUiResourceUri(tool);
const read = await client.readResource({ uri: out.resourceUri });
const view = read.contents[0];
out.mimeType = view.mimeType;
out.csp = view._meta?.ui?.csp;
if (view.mimeType !== RESOURCE_MIME_TYPE || typeof view.text !== "string") fail("the view is not an MCP App");

// The spec's CSP construction from the resource's declared domains.
const csp = out.csp || {};
const res = (csp.resourceDomains || []).join(" ");
const cspHeader = [
  "default-src 'none'", `script-src 'self' 'unsafe-inline' ${res}`, `style-src 'self' 'unsafe-inline' ${res}`,
  `connect-src 'self' ${(csp.connectDomains || []).join(" ")}`, `img-src 'self' data: ${res}`, `font-src 'self' ${res}`,
  `media-src 'self' data: ${res}`, `frame-src ${(csp.frameDomains || []).join(" ") || "'none'"}`, "object-src 'none'",
  `base-uri ${(csp.baseUriDomains || []).join(" ") || "'self'"}`,
].join("; ");

const input = { node: "pve1", type: "qemu", vmid: 100, timeframe: "day" };
const result = await client.callTool({ name: "metrics_chart", arguments: input });

// The host page's script: AppBridge bundled for the browser.
const bundle = await esbuild.build({
  stdin: {
    contents: `import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.startHost = async (input, result) => {
  const frame = document.getElementById("view");
  const bridge = new AppBridge(null, { name: "ci-apps-host", version: "0.1.0" }, { serverTools: {} },
    { hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "desktop",
      containerDimensions: { width: 840, maxHeight: 2000 } } });
  bridge.oncalltool = (params) => window.callServerTool(params);
  bridge.onsizechange = ({ height }) => { if (height > 0) frame.style.height = height + "px"; window.sized = height; };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = "/view";
};`,
    resolveDir: new URL(".", import.meta.url).pathname, loader: "js",
  },
  bundle: true, format: "iife", platform: "browser", write: false, logLevel: "error",
});
const hostJS = bundle.outputFiles[0].text;
const hostPage = `<!doctype html><html><head><meta charset="utf-8"><title>ci host</title></head>
<body style="margin:0;padding:16px"><iframe id="view" sandbox="allow-scripts" style="width:840px;height:200px;border:1px solid #ccc"></iframe>
<script src="/host.js"></script></body></html>`;

const server = http.createServer((req, res) => {
  if (req.url === "/") { res.setHeader("Content-Type", "text/html"); res.end(hostPage); }
  else if (req.url === "/host.js") { res.setHeader("Content-Type", "text/javascript"); res.end(hostJS); }
  else if (req.url === "/view") {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    res.setHeader("Content-Security-Policy", cspHeader);
    res.end(view.text);
  } else { res.statusCode = req.url === "/favicon.ico" ? 204 : 404; res.end(); }
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu",
  "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") out.log.push(m.text()); });
  await page.exposeFunction("callServerTool", async (params) => {
    out.forwarded.push(params);
    return client.callTool(params);
  });
  await page.goto(base + "/");
  await page.evaluate(([i, r]) => window.startHost(i, r), [input, result]);
  const frame = await (await page.waitForSelector("#view")).contentFrame();
  const chart = "document.getElementById('chart')";
  await frame.waitForFunction(`${chart}.naturalWidth > 0 && !${chart}.hidden`, null, { timeout: 30000 });
  out.first = await frame.evaluate(() => ({
    size: document.getElementById("chart").naturalWidth + "x" + document.getElementById("chart").naturalHeight,
    summary: document.getElementById("summary").textContent,
    origin: String(self.origin),
  }));
  out.expectedSummary = result.content.find((c) => c.type === "text").text;
  await page.waitForFunction("window.sized > 400", null, { timeout: 30000 });
  out.sized = await page.evaluate("window.sized");
  await frame.click("[data-timeframe=week]");
  await frame.waitForFunction(() => document.getElementById("summary").textContent.includes("last week (average)"), null, { timeout: 30000 });
  out.week = await frame.evaluate(() => ({
    size: document.getElementById("chart").naturalWidth + "x" + document.getElementById("chart").naturalHeight,
    summary: document.getElementById("summary").textContent,
  }));
} catch (e) {
  out.error = String((e && e.stack) || e);
} finally {
  await browser.close();
  server.close();
  await client.close();
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
