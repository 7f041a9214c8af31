#!/usr/bin/env bash
# Third-party client check of the legacy HTTP+SSE transport: the npm MCP
# Inspector CLI (a TypeScript-SDK client we do not control) connects to the
# built binary serving `--demo` with MCP_TRANSPORT=sse and a bearer token.
#
#   bash ci/sse-smoke.sh
#
# Checks: with the token, tools/list lists the tools and a tool call
# succeeds (over --transport sse); without the token, with an evil Origin,
# and with an evil Host the server refuses before any session exists
# (inspector exit 3 = auth/HTTP 401/403; the Host case by a raw request,
# since fetch cannot forge Host); the token appears in no server log.
#
# Shares ci/inspector-smoke.sh's pins and cache (run after it, nothing is
# installed twice): @modelcontextprotocol/inspector 2.12.0 on node@22 from
# the npm registry when the system Node is older.
#
# Environment:
#   INSPECTOR_CACHE   install directory (default: ci/.cache, gitignored)
set -euo pipefail

INSPECTOR_VERSION=2.12.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${INSPECTOR_CACHE:-$ROOT/ci/.cache}"

say() { printf 'sse-smoke: %s\n' "$*" >&2; }
fail() { printf 'sse-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || fail "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed"
command -v go >/dev/null || fail "go is not installed"

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- Node and the inspector (same cache as ci/inspector-smoke.sh) -------
# shellcheck source=ci/inspector-setup.sh
source "$ROOT/ci/inspector-setup.sh"
export MCP_INSPECTOR_SECRET_STORE=memory
export MCP_STORAGE_DIR="$WORK/storage"
export MCP_INSPECTOR_OAUTH_STATE_PATH="$WORK/oauth-state.json"

# --- Server under test: --demo over SSE with a token --------------------
BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"
TOKEN="$("$NODE_BIN" -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')"
PORT="$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
URL="http://127.0.0.1:$PORT/sse"
env -i PATH="$PATH" HOME="$WORK" TMPDIR="$WORK" \
  MCP_TRANSPORT=sse MCP_HOST=127.0.0.1 MCP_PORT="$PORT" MCP_AUTH_TOKEN="$TOKEN" \
  "$BIN" --demo --read-only --log-level info >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  "$BIN" healthcheck --url "http://127.0.0.1:$PORT/healthz" --timeout 1s >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "server exited: $(cat "$WORK/server.err")"
  sleep 0.1
done
grep -q 'transport=sse' "$WORK/server.err" || fail "the server does not say it serves sse: $(cat "$WORK/server.err")"
say "server at $URL"

# inspect NAME ARGS... runs one inspector command over SSE; sets CODE.
inspect() {
  local name="$1"; shift
  set +e
  "$INSPECTOR" --cli --transport sse --server-url "$URL" --format json "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  CODE=$?
  set -e
}
check() { # NAME JS-EXPRESSION MESSAGE, with r = parsed stdout
  if ! "$NODE_BIN" -e '
    let r; try { r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); } catch (e) { process.exit(2); }
    process.exit(('"$2"') ? 0 : 1);' "$WORK/$1.out"; then
    say "stdout of $1: $(head -c 2000 "$WORK/$1.out")"; say "stderr of $1: $(tail -n 20 "$WORK/$1.err")"
    fail "$1: $3"
  fi
}

inspect tools --method tools/list --header "Authorization: Bearer $TOKEN"
[[ $CODE == 0 ]] || fail "tools/list over SSE exited $CODE: $(tail -n 5 "$WORK/tools.err")"
check tools 'r.result.tools.some(t => t.name === "cluster_status") && r.result.tools.some(t => t.name === "list_guests")' \
  "tools/list over SSE lacks cluster_status or list_guests"
say "ok: tools/list over SSE"

inspect call --method tools/call --tool-name cluster_status --tool-args-json '{}' --header "Authorization: Bearer $TOKEN"
[[ $CODE == 0 ]] || fail "cluster_status over SSE exited $CODE: $(tail -n 5 "$WORK/call.err")"
check call 'r.result.isError !== true && r.result.structuredContent.name === "demo"' "cluster_status over SSE did not return the demo cluster"
say "ok: tools/call over SSE"

inspect notoken --method tools/list
[[ $CODE == 3 ]] || fail "tools/list without a token exited $CODE, want 3 (auth refused)"
inspect evilorigin --method tools/list --header "Authorization: Bearer $TOKEN" --header "Origin: http://evil.example"
[[ $CODE == 3 ]] || fail "tools/list with an evil Origin exited $CODE, want 3 (403)"
say "ok: missing token and evil Origin refused"

# A raw request for what fetch cannot send: a forged Host (DNS rebinding).
status() { # HOST ORIGIN -> status of GET /sse
  "$NODE_BIN" -e '
    const [url, host, origin, token] = process.argv.slice(1);
    const h = {"Accept": "text/event-stream", "Authorization": "Bearer " + token, "Host": host};
    if (origin) h.Origin = origin;
    require("http").get(url, {headers: h}, r => { console.log(r.statusCode); r.destroy(); })
      .on("error", e => console.log("error " + e.message));' "$URL" "$1" "$2" "$TOKEN"
}
[[ "$(status evil.example "")" == 403 ]] || fail "GET /sse with Host evil.example was not refused with 403"
[[ "$(status "evil.example:$PORT" http://evil.example:$PORT)" == 403 ]] || fail "rebinding (Host and Origin evil) was not refused with 403"
[[ "$(status "127.0.0.1:$PORT" "")" == 200 ]] || fail "GET /sse with a valid Host and token was not served"
say "ok: evil Host refused"

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "server exited $? on SIGTERM"
SERVER_PID=""
grep -q "$TOKEN" "$WORK/server.err" && fail "the bearer token appears in the server log"
grep -q 'level=ERROR' "$WORK/server.err" && fail "server logged errors: $(grep 'level=ERROR' "$WORK/server.err" | head -n 5)"
say "PASS (inspector $INSPECTOR_VERSION over sse on node $("$NODE_BIN" --version))"
