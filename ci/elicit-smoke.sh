#!/usr/bin/env bash
# Third-party elicitation check: the TypeScript MCP SDK client (which we do
# not control) drives the built binary in --demo mode over stdio, with the
# power class approved by elicitation only (--approvals power=elicit; the TS
# SDK passes the server only a few safe environment variables, so a flag).
#
#   bash ci/elicit-smoke.sh
#
# Checks: the person is shown the plan (action, target, state, effect, risk)
# and asked to type the VMID; typing it approves one shutdown (UPID, audit
# record "approved" by "elicit"); a wrong VMID and a decline are refused and
# audited, with nothing submitted.
#
# Pinned: @modelcontextprotocol/sdk 1.32.2 (engines: Node >= 18; Debian's
# Node 20 works). Installed once into ci/.cache (gitignored).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf 'elicit-smoke: %s\n' "$*" >&2; }
fail() { printf 'elicit-smoke: FAIL: %s\n' "$*" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# shellcheck source=ci/ts-sdk.sh
. "$ROOT/ci/ts-sdk.sh" # SDK_VERSION, CACHE, the install
cp "$ROOT/ci/elicit-client.mjs" "$CACHE/elicit-client.mjs"

BIN="$WORK/proxmox-safe-mcp"
(cd "$ROOT" && go build -o "$BIN" ./cmd/proxmox-safe-mcp) || fail "go build ./cmd/proxmox-safe-mcp"

run() { # run NAME ANSWER: one session, one guest_power call; JSON in $OUT
  OUT="$(node "$CACHE/elicit-client.mjs" "$2" "$BIN" --approvals power=elicit \
    --demo --log-level warn --audit-log "$WORK/$1.jsonl")" || fail "$1: the client failed: $OUT"
}
check() { # check NAME JS-EXPR MESSAGE: evaluate against r = parsed $OUT
  R="$OUT" node -e "const r = JSON.parse(process.env.R); process.exit(($2) ? 0 : 1)" || fail "$3: $OUT"
}

run wrong type:101
check wrong 'r.seen.length === 1 && r.result.isError === true && r.result.content[0].text.includes("typed confirmation does not match")' \
  "a wrong VMID was not refused"
grep -q '"event":"refused"' "$WORK/wrong.jsonl" && ! grep -q '"event":"submitted"' "$WORK/wrong.jsonl" \
  || fail "the wrong-VMID refusal is not audited, or something was submitted"
say "ok: wrong VMID refused and audited"

run decline decline
check decline 'r.result.isError === true && r.result.content[0].text.includes("declined")' "a decline was not refused"
! grep -q '"event":"submitted"' "$WORK/decline.jsonl" || fail "a declined shutdown was submitted"
say "ok: decline refused"

run accept type:100
check accept-form '["Action: shutdown", "Target: pve1/qemu/100", "Current state: status running", "Effect: approving will", "Risk:"].every(s => r.seen[0].message.includes(s)) && r.seen[0].requestedSchema.required.includes("confirm")' \
  "the form does not show the plan or does not ask for the VMID"
check accept 'r.result.isError !== true && /UPID:/.test(JSON.stringify(r.result))' "typing the VMID did not approve the shutdown"
grep '"event":"approved"' "$WORK/accept.jsonl" | grep -q '"approver":"elicit"' || fail "the approval is not audited with approver elicit"
[[ $(grep -c '"event":"submitted"' "$WORK/accept.jsonl") == 1 ]] || fail "not exactly one submitted record"
say "ok: typing the VMID approved one shutdown, audited as elicit"
