#!/usr/bin/env bash
# Third-party check of metrics_chart's MCP Apps view: the official MCP Apps
# host SDK (AppBridge of @modelcontextprotocol/ext-apps, which we do not
# control) renders the ui:// page in Debian's headless Chromium, driven by
# playwright-core, with the built binary in --demo mode behind it over
# stdio (the TypeScript MCP SDK's client). It must find the view through
# the tool's _meta.ui.resourceUri, read it as text/html;profile=mcp-app
# with an empty csp declaration, and the page must show the result's PNG
# (800x400) with the tool's summary line, size its frame, and redraw the
# last week through a tools/call the host forwards to the server.
#
#   bash ci/apps-smoke.sh
#
# Pinned: @modelcontextprotocol/ext-apps 1.7.5 (the 1.x line, for the
# TypeScript SDK 1.x of ci/ts-sdk.sh; 2.x needs the SDK's 2.x packages),
# playwright-core 1.64.1 (no browser download: it drives /usr/bin/chromium),
# esbuild 0.28.2 (bundles AppBridge for the browser). Node >= 20.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf 'apps-smoke: %s\n' "$*" >&2; }
fail() { printf 'apps-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

EXT_APPS_VERSION=1.7.5
PLAYWRIGHT_VERSION=1.64.1
ESBUILD_VERSION=0.28.2

CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
[[ -n "$CHROMIUM" ]] || fail "chromium is not installed (apt-get install chromium)"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=ci/ts-sdk.sh
. "$ROOT/ci/ts-sdk.sh" # SDK_VERSION and its install; the host gets its own cache
CACHE="$ROOT/ci/.cache/apps-host-$SDK_VERSION-$EXT_APPS_VERSION-$PLAYWRIGHT_VERSION-$ESBUILD_VERSION"
if [[ ! -d "$CACHE/node_modules/esbuild" ]]; then
  say "installing the host's packages into $CACHE"
  mkdir -p "$CACHE"
  printf '{"private":true,"type":"module"}\n' >"$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/sdk@$SDK_VERSION" "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" \
    "playwright-core@$PLAYWRIGHT_VERSION" "esbuild@$ESBUILD_VERSION" >&2
fi
cp "$ROOT/ci/apps-host.mjs" "$CACHE/apps-host.mjs"
BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"

OUT="$(node "$CACHE/apps-host.mjs" "$CHROMIUM" "$BIN" --demo --log-level warn --audit-log "$WORK/audit.jsonl")" || fail "the host failed: $OUT"
R="$OUT" node -e '
const r = JSON.parse(process.env.R);
const ok = r.resourceUri === "ui://proxmox-safe-mcp/metrics-chart" && r.mimeType === "text/html;profile=mcp-app" &&
  JSON.stringify(r.csp) === "{}" && r.first.size === "800x400" && r.first.summary === r.expectedSummary &&
  r.first.origin === "null" && r.sized > 400 && r.week.size === "800x400" &&
  r.week.summary.startsWith("VM 100 on pve1, last week (average): ") &&
  r.forwarded.length === 1 && r.forwarded[0].name === "metrics_chart" && r.forwarded[0].arguments.timeframe === "week" &&
  r.forwarded[0].arguments.vmid === 100 && r.log.length === 0;
process.exit(ok ? 0 : 1)' || fail "what the host saw: $OUT"
say "ok: view $(R="$OUT" node -e 'const r=JSON.parse(process.env.R); console.log(r.resourceUri, "shown", r.first.size, "then", r.week.summary.slice(0, 40) + "…")')"
