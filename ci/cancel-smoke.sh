#!/usr/bin/env bash
# Third-party cancellation check: the TypeScript MCP SDK client (which we do
# not control) cancels two slow guest_power calls (AbortSignal, so
# notifications/cancelled) against the built binary in --demo mode, over
# stdio and over streamable HTTP with a bearer token; then mark3labs/mcp-go
# (ci/mcpgo-cancel, its own module) does the same over stdio on protocol
# 2026-07-28 and 2025-11-25 (over HTTP it sends no notification).
#
#   bash ci/cancel-smoke.sh        (about 45 s once the SDK and mcp-go are cached)
#
# Checks: the server sends no answer to a cancelled request (the SDK
# reports one as "Received a response for an unknown message ID"), a later
# call is answered, and both cancelled shutdown/start requests, already
# sent to Proxmox, are in the audit log as submitted.
#
# Pinned: @modelcontextprotocol/sdk 1.32.2, shared with ci/elicit-smoke.sh
# (installed once into ci/.cache, gitignored).
set -euo pipefail

SDK_VERSION=1.32.2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ELICIT_CACHE:-$ROOT/ci/.cache/ts-sdk-$SDK_VERSION}"

say() { printf 'cancel-smoke: %s\n' "$*" >&2; }
fail() { printf 'cancel-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || fail "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ ! -d "$CACHE/node_modules/@modelcontextprotocol/sdk" ]]; then
  say "installing @modelcontextprotocol/sdk@$SDK_VERSION into $CACHE"
  mkdir -p "$CACHE"
  printf '{"private":true,"type":"module"}\n' >"$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$SDK_VERSION" >&2
fi
cp "$ROOT/ci/cancel-client.mjs" "$CACHE/cancel-client.mjs"

BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"

submitted() { # submitted LOG: the number of submitted records
  grep -c '"event":"submitted"' "$1" || true
}

# stdio
OUT="$(node "$CACHE/cancel-client.mjs" "$BIN" --demo --log-level error --audit-log "$WORK/stdio.jsonl" 2>"$WORK/stdio.err")" \
  || fail "stdio: $OUT $(cat "$WORK/stdio.err")"
[[ "$(submitted "$WORK/stdio.jsonl")" == 2 ]] || fail "stdio: the two cancelled requests are not audited as submitted"
say "ok: stdio: $OUT"

# streamable HTTP
TOKEN="$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')"
PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
MCP_TRANSPORT=http MCP_HOST=127.0.0.1 MCP_PORT="$PORT" MCP_AUTH_TOKEN="$TOKEN" \
  "$BIN" --demo --log-level error --audit-log "$WORK/http.jsonl" >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 100); do
  "$BIN" healthcheck --url "http://127.0.0.1:$PORT/healthz" --timeout 1s >/dev/null 2>&1 && break
  sleep 0.1
done
OUT="$(MCP_TOKEN="$TOKEN" node "$CACHE/cancel-client.mjs" "http://127.0.0.1:$PORT/mcp")" \
  || fail "http: $OUT $(cat "$WORK/server.err")"
[[ "$(submitted "$WORK/http.jsonl")" == 2 ]] || fail "http: the two cancelled requests are not audited as submitted"
say "ok: http: $OUT"
kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=""

# mcp-go over stdio, both protocol eras
for pv in "" 2025-11-25; do
  dir="$WORK/mcpgo-${pv:-newest}"; mkdir -p "$dir"
  OUT="$(cd "$ROOT/ci/mcpgo-cancel" && go run . "$BIN" "$pv" "$dir" 2>&1)" || fail "mcp-go ${pv:-newest}: $OUT"
  [[ "$(submitted "$dir/audit.jsonl")" == 2 ]] || fail "mcp-go ${pv:-newest}: the two cancelled requests are not audited as submitted"
  say "ok: mcp-go stdio: $OUT"
done
say "PASS (@modelcontextprotocol/sdk $SDK_VERSION on node $(node --version); mark3labs/mcp-go v1.2.1)"
