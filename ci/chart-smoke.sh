#!/usr/bin/env bash
# Third-party check of the metrics chart: the TypeScript MCP SDK client
# (which we do not control) calls metrics_chart on the built binary in
# --demo mode over stdio and must receive what a host shows inline: an
# image content of type image/png that decodes as a PNG of 800x400, beside
# a one-line text summary, and no structuredContent (Claude Code drops the
# image of a result that has it).
#
#   bash ci/chart-smoke.sh
#
# Pinned: @modelcontextprotocol/sdk 1.32.2, shared with ci/elicit-smoke.sh's
# cache in ci/.cache.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf 'chart-smoke: %s\n' "$*" >&2; }
fail() { printf 'chart-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=ci/ts-sdk.sh
. "$ROOT/ci/ts-sdk.sh" # SDK_VERSION, CACHE, the install
cp "$ROOT/ci/chart-client.mjs" "$CACHE/chart-client.mjs"
BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"

OUT="$(node "$CACHE/chart-client.mjs" "$BIN" --demo --log-level warn --audit-log "$WORK/audit.jsonl")" || fail "the client failed: $OUT"
R="$OUT" node -e '
const r = JSON.parse(process.env.R);
const img = r.contents.filter((c) => c.type === "image");
const txt = r.contents.filter((c) => c.type === "text");
const ok = r.listed && !r.isError && !r.structured && !r.hasOutputSchema &&
  img.length === 1 && img[0].mimeType === "image/png" && img[0].signature === "89504e470d0a1a0a" &&
  img[0].width === 800 && img[0].height === 400 && txt.length === 1 && txt[0].text.length > 0 && !txt[0].text.includes("\n");
process.exit(ok ? 0 : 1)' || fail "metrics_chart as the TypeScript SDK received it: $OUT"
say "ok: $OUT"
