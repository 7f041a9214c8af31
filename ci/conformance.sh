#!/usr/bin/env bash
# Official MCP conformance suite against the built binary over streamable
# HTTP, in the test-only mode `--demo --http 127.0.0.1:<free port>` (loopback,
# simulated cluster, no token: the suite has no way to send one).
#
#   bash ci/conformance.sh
#
# Pass criteria:
#   1. every scenario of the active suite passes, except those listed in
#      ci/conformance-baseline.yml (the suite itself fails the run when a
#      listed scenario starts passing: "stale baseline");
#   2. every failing check fails only because a conformance fixture (a
#      test_* tool or prompt, a test:// resource) or a deliberately absent
#      capability (completions, resource subscriptions) is missing, so a real
#      regression inside a baselined scenario is still caught;
#   3. the stale-baseline rule is itself working (a one-scenario run with a
#      baseline naming a passing scenario must fail).
#
# Pinned: @modelcontextprotocol/conformance 0.1.16. It needs Node >= 22
# (0.1.14+ import fs.globSync); when the system Node is older, node@22 is
# installed from the npm registry into the cache, as ci/inspector-smoke.sh
# does. 0.1.13 is the last version that runs on Node 20 and gives the same
# result; set CONFORMANCE_VERSION=0.1.13 CONFORMANCE_NODE=system to use it.
#
# The dns-rebinding-protection scenario sends Origin http://127.0.0.1:<port>
# in its positive check and Host+Origin evil.example.com in its negative
# one. It runs against the DEFAULT configuration (no MCP_ALLOWED_ORIGINS):
# the server accepts exactly the loopback origin it is bound to and
# nothing else (docs/SECURITY.md). A curl probe below also checks that an
# evil Origin with a valid Host is refused, which the scenario does not.
#
# Environment:
#   CONFORMANCE_CACHE    install directory (default: ci/.cache, gitignored)
#   CONFORMANCE_NODE     "auto" (default), "system" (never install node@22)
#   CONFORMANCE_VERSION  suite version (default 0.1.16)
set -euo pipefail

VERSION="${CONFORMANCE_VERSION:-0.1.16}"
NODE_PIN=22
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CONFORMANCE_CACHE:-$ROOT/ci/.cache}"
NODE_MODE="${CONFORMANCE_NODE:-auto}"
BASELINE="$ROOT/ci/conformance-baseline.yml"

say() { printf 'conformance: %s\n' "$*" >&2; }
fail() { printf 'conformance: FAIL: %s\n' "$*" >&2; exit 1; }

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

# --- Node ---------------------------------------------------------------
node_ok() { "$1" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)'; }
NODE_BIN="$(command -v node)"
if ! node_ok "$NODE_BIN" && [[ "$NODE_MODE" != system ]]; then
  N22="$CACHE/node-$NODE_PIN"
  if [[ ! -x "$N22/node_modules/.bin/node" ]] || ! node_ok "$N22/node_modules/.bin/node"; then
    say "system Node $(node --version) is older than the suite needs; installing node@$NODE_PIN into $N22"
    mkdir -p "$N22"
    npm install --prefix "$N22" --no-audit --no-fund --loglevel=error "node@$NODE_PIN" >&2
  fi
  node_ok "$N22/node_modules/.bin/node" || fail "node@$NODE_PIN did not install"
  export PATH="$N22/node_modules/.bin:$PATH"
  NODE_BIN="$N22/node_modules/.bin/node"
fi
say "node $("$NODE_BIN" --version)"

# --- Suite --------------------------------------------------------------
CDIR="$CACHE/conformance-$VERSION"
SUITE="$CDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
installed_version() {
  "$NODE_BIN" -p 'require(process.argv[1]).version' "$CDIR/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || true
}
if [[ "$(installed_version)" != "$VERSION" ]]; then
  say "installing @modelcontextprotocol/conformance@$VERSION into $CDIR"
  mkdir -p "$CDIR"
  npm install --prefix "$CDIR" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "@modelcontextprotocol/conformance@$VERSION" >&2
fi
[[ "$(installed_version)" == "$VERSION" ]] || fail "conformance $VERSION did not install"
conformance() { "$NODE_BIN" "$SUITE" "$@"; }

# --- Server under test --------------------------------------------------
BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"
PORT="$("$NODE_BIN" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
URL="http://127.0.0.1:$PORT/mcp"
# A clean environment: no developer PVE_* or MCP_* settings leak in.
env -i PATH="$PATH" HOME="$WORK" TMPDIR="$WORK" \
  "$BIN" --demo --read-only --http "127.0.0.1:$PORT" --log-level warn \
  >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  "$BIN" healthcheck --url "http://127.0.0.1:$PORT/healthz" --timeout 1s >/dev/null 2>&1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "server exited: $(cat "$WORK/server.err")"
  sleep 0.1
done
"$BIN" healthcheck --url "http://127.0.0.1:$PORT/healthz" >/dev/null || fail "server not healthy: $(cat "$WORK/server.err")"
say "server at $URL"

# --- 0. What the rebinding scenario does not check ----------------------
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ci","version":"0"}}}'
probe() { # ORIGIN -> HTTP status of an initialize with that Origin
  "$NODE_BIN" -e '
    fetch(process.argv[1], {method: "POST", body: process.argv[3], headers: {
      "Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Origin": process.argv[2]}})
    .then(r => { console.log(r.status); return r.body?.cancel(); })
    .catch(e => { console.log("error " + e.message); });' "$URL" "$1" "$INIT"
}
[[ "$(probe http://evil.example)" == 403 ]] || fail "an evil Origin with a valid Host was not refused with 403"
[[ "$(probe "http://localhost:$PORT")" == 403 ]] || fail "an Origin other than the bound one (localhost:$PORT) was not refused"
[[ "$(probe "http://127.0.0.1:$PORT")" == 200 ]] || fail "the bound origin http://127.0.0.1:$PORT was refused"
say "ok: default Origin rule (bound origin only)"

# --- 1. Active suite with the baseline ----------------------------------
set +e
conformance server --url "$URL" --expected-failures "$BASELINE" -o "$WORK/out" >"$WORK/suite.log" 2>&1
CODE=$?
set -e
sed -n '/=== SUMMARY ===/,$p' "$WORK/suite.log" >&2
[[ $CODE == 0 ]] || fail "the suite exited $CODE (a scenario outside the baseline failed, or the baseline is stale); see the summary above"

# --- 2. Every failure is a missing fixture ------------------------------
"$NODE_BIN" -e '
  const fs = require("fs"), path = require("path");
  const dir = process.argv[1];
  const fixture = /unknown tool "test_|unknown prompt "test_|Resource not found|method not found: "(completion\/complete|resources\/subscribe|resources\/unsubscribe)"/;
  let bad = 0, failures = 0;
  for (const d of fs.readdirSync(dir)) {
    const f = path.join(dir, d, "checks.json");
    if (!fs.existsSync(f)) continue;
    for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
      if (c.status !== "FAILURE") continue;
      failures++;
      if (!fixture.test(c.errorMessage || "")) { bad++; console.error(`${d}: ${c.id}: ${c.errorMessage}`); }
    }
  }
  console.error(`conformance: ${failures} failing checks, all for missing fixtures: ${bad === 0}`);
  process.exit(bad === 0 ? 0 : 1);' "$WORK/out" || fail "a baselined scenario failed for a reason other than a missing fixture"

# --- 3. The stale-baseline rule works -----------------------------------
printf 'server:\n  - ping\n' >"$WORK/stale.yml"
if conformance server --url "$URL" --scenario ping --expected-failures "$WORK/stale.yml" >"$WORK/stale.log" 2>&1; then
  fail "a stale baseline entry (ping) did not fail the run"
fi
grep -q "Stale baseline" "$WORK/stale.log" || fail "stale-baseline run failed for another reason: $(tail -n 5 "$WORK/stale.log")"
say "ok: a stale baseline entry fails the run"

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "server exited $? on SIGTERM"
SERVER_PID=""
if grep -q 'level=ERROR' "$WORK/server.err"; then
  fail "server logged errors: $(grep 'level=ERROR' "$WORK/server.err" | head -n 5)"
fi
say "PASS (conformance $VERSION on node $("$NODE_BIN" --version))"
