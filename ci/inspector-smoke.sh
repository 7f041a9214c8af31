#!/usr/bin/env bash
# Third-party client check: drive the built proxmox-safe-mcp binary in --demo
# mode with the npm MCP Inspector CLI (a TypeScript-SDK client we do not
# control), over real stdio.
#
#   bash ci/inspector-smoke.sh
#
# Checks: tools/list shows exactly the tools the binary's own `tools`
# command lists (and at least the five original ones); cluster_status succeeds;
# guest_power without approval is refused (isError, inspector exit 5) and the
# refusal names the exact phrase; with the phrase it succeeds with a UPID.
#
# Pinned: @modelcontextprotocol/inspector 2.12.0. It declares Node >= 22.19;
# when the system Node is older (Debian's is 20), node@22 is installed from
# the npm registry next to it (a few seconds, once). If that fails, the system
# Node is used with a warning: 2.12.0 was verified to work on Node 20.20.
#
# Environment:
#   INSPECTOR_CACHE   install directory (default: ci/.cache, gitignored)
#   INSPECTOR_NODE    "auto" (default), "system" (never install node@22)
set -euo pipefail

INSPECTOR_VERSION=2.12.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${INSPECTOR_CACHE:-$ROOT/ci/.cache}"
INSPECTOR_NODE="${INSPECTOR_NODE:-auto}"

say() { printf 'inspector-smoke: %s\n' "$*" >&2; }
fail() { printf 'inspector-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || fail "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed"
command -v go >/dev/null || fail "go is not installed"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# --- Node and the inspector --------------------------------------------
# shellcheck source=ci/inspector-setup.sh
source "$ROOT/ci/inspector-setup.sh"

# --- Server under test --------------------------------------------------
BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"
# A config file rather than "--cli $BIN --demo": our flags (e.g. --log-level)
# would otherwise collide with the inspector's own.
cat >"$WORK/servers.json" <<EOF
{"mcpServers": {"demo": {"command": "$BIN", "args": ["--demo", "--log-level", "warn", "--audit-log", "$WORK/audit.jsonl"]}}}
EOF

# Keep the inspector away from the user's keychain and OAuth state (--config
# already keeps it off the catalog; MCP_CATALOG_PATH would conflict with it).
export MCP_INSPECTOR_SECRET_STORE=memory
export MCP_STORAGE_DIR="$WORK/storage"
export MCP_INSPECTOR_OAUTH_STATE_PATH="$WORK/oauth-state.json"

# inspect NAME ARGS... runs one inspector command; sets OUT, ERR, CODE.
inspect() {
  local name="$1"; shift
  set +e
  "$INSPECTOR" --cli --config "$WORK/servers.json" --server demo --format json "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  CODE=$?
  set -e
  OUT="$(cat "$WORK/$name.out")"
}
# check NAME JS-EXPRESSION MESSAGE: evaluates the expression with r = parsed stdout.
check() {
  local name="$1" expr="$2" msg="$3"
  if ! "$NODE_BIN" -e '
    const fs = require("fs");
    let r; try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); } catch (e) { process.exit(2); }
    const text = (r.result?.content ?? []).filter(c => c.type === "text").map(c => c.text).join("\n");
    // A result text: words, an empty line, the data (internal/textform).
    const words = text.split("\n\n")[0], data = text.split("\n\n").slice(1).join("\n\n"), lines = data.split("\n");
    const strings = v => typeof v === "string" ? [v] : v && typeof v === "object" ? Object.values(v).flatMap(strings) : [];
    process.exit(('"$expr"') ? 0 : 1);' "$WORK/$name.out"; then
    say "stdout of $name: $(head -c 2000 "$WORK/$name.out")"
    say "stderr of $name: $(tail -n 20 "$WORK/$name.err")"
    fail "$name: $msg"
  fi
}

PHRASE="APPROVE shutdown pve1/qemu/100"
POWER='"node":"pve1","type":"qemu","vmid":100,"action":"shutdown"'

# What the server says it offers, through its own CLI (not through MCP).
export EXPECTED_TOOLS="$("$BIN" --demo tools 2>/dev/null | awk 'NR > 1 {print $1}' | sort | paste -sd, -)"
[[ -n $EXPECTED_TOOLS ]] || fail "proxmox-safe-mcp --demo tools listed nothing"

inspect tools-list --method tools/list
[[ $CODE == 0 ]] || fail "tools/list exited $CODE: $(tail -n 5 "$WORK/tools-list.err")"
check tools-list 'r.result.tools.map(t => t.name).sort().join(",") === process.env.EXPECTED_TOOLS' \
  "tools/list does not list exactly the tools 'proxmox-safe-mcp tools' lists ($EXPECTED_TOOLS)"
check tools-list '["cluster_status","guest_power","list_guests","node_status","snapshot_guest"].every(n => r.result.tools.some(t => t.name === n))' \
  "tools/list lacks one of the five original tools"
check tools-list 'r.result.tools.every(t => t.annotations && typeof t.annotations.readOnlyHint === "boolean" && typeof t.annotations.destructiveHint === "boolean")' \
  "a tool lacks explicit readOnly/destructive annotations"
inspect tools-strict --method tools/list --strict
if [[ $CODE != 0 ]] || grep -q '^Warning: tool' "$WORK/tools-strict.err"; then
  grep -A3 '^Warning: tool' "$WORK/tools-strict.err" >&2 || true
  fail "tools/list --strict: schema portability problems (exit $CODE)"
fi
say "ok: tools/list (strict schema portability: no warnings)"

inspect cluster-status --method tools/call --tool-name cluster_status --tool-args-json '{}'
[[ $CODE == 0 ]] || fail "cluster_status exited $CODE, want 0: $OUT"
check cluster-status 'r.result.isError !== true && r.result.structuredContent.name === "demo" && r.result.structuredContent.nodes.length === 4 && r.result.structuredContent.nodes.filter(n => n.online).length === 3' \
  "cluster_status did not return the demo cluster (4 nodes, pve4 offline)"
# After the summary and an empty line the text carries the data in the
# compact form (internal/textform): a row per node, every string of the result.
check cluster-status '!words.includes("\n") && lines.includes("name: demo") && lines.includes("quorate: true") && r.result.structuredContent.nodes.every(n => lines.some(l => l.startsWith(n.name + "\t" + n.nodeid + "\t"))) && strings(r.result.structuredContent).every(s => data.includes(s))' \
  "cluster_status: the text content does not carry the data after its summary (hosts that show only content would see no data)"
say "ok: cluster_status (data in structuredContent and in the text content)"

inspect guest-config --method tools/call --tool-name guest_config --tool-args-json '{"node":"pve1","type":"qemu","vmid":100}'
[[ $CODE == 0 ]] || fail "guest_config exited $CODE, want 0: $OUT"
check guest-config '["args","cipassword","sshkeys"].every(k => r.result.structuredContent.redacted.includes(k)) && !JSON.stringify(r).includes("DEMO-SECRET-IN-ARGS") && !JSON.stringify(r).includes("DemoKeyOnly")' \
  "guest_config did not redact the demo guest's args, cipassword and sshkeys"
say "ok: guest_config redacts secret-bearing keys"

inspect power-refused --method tools/call --tool-name guest_power --tool-args-json "{$POWER}"
[[ $CODE == 5 ]] || fail "guest_power without approval exited $CODE, want 5 (tool isError): $OUT"
check power-refused "r.result.isError === true && text.includes('$PHRASE')" \
  "the refusal does not name the exact phrase \"$PHRASE\""
check power-refused "(e => e.kind === 'approval_required' && e.approval_phrase === '$PHRASE' && e.action_taken === 'none' && e.current_state.status === 'running')(JSON.parse(text.split('\\n').pop()).error)" \
  "the refusal's last text line is not the machine-readable refusal"
say "ok: guest_power refused without approval (exit 5)"

inspect power-approved --method tools/call --tool-name guest_power --tool-args-json "{$POWER,\"approval\":\"$PHRASE\"}"
[[ $CODE == 0 ]] || fail "guest_power with the phrase exited $CODE, want 0: $OUT"
check power-approved 'r.result.isError !== true && String(r.result.structuredContent?.upid).startsWith("UPID:") && text.includes("UPID:")' \
  "guest_power with the phrase returned no UPID"
say "ok: guest_power approved (UPID returned)"

grep -q '"event":"refused"' "$WORK/audit.jsonl" && grep -q '"event":"submitted"' "$WORK/audit.jsonl" \
  || fail "the audit log lacks the refused/submitted records of the two guest_power calls"
say "ok: audit log recorded the refusal and the submission"

say "PASS (inspector $INSPECTOR_VERSION on node $("$NODE_BIN" --version))"
