#!/usr/bin/env bash
# Runs deploy/systemd/proxmox-safe-mcp.service under a real systemd.
# Called by ci/container.sh, which provides a private podman
# (CONTAINER_PODMAN), the static binary (CONTAINER_BINARY) and a work
# directory it removes afterwards (CONTAINER_WORK); it also removes every
# container this script leaves behind.
#
# systemd is not PID 1 on these machines, so `systemctl start` cannot be
# tried on the host. Instead systemd boots as PID 1 of a container
# (podman --systemd=always): the host's /usr (Debian 12, systemd 252)
# mounted read-only, a fresh /etc holding only the unit (as shipped, not
# edited), its two credential files and the enable symlink, and the binary
# as /usr/local/bin/proxmox-safe-mcp. There is no Proxmox: the server
# starts (reading both credentials) and serves; it is only listed, never
# called, so it never tries pve1.example.com (its privilege check begins
# with the first tool call).
#
# Checks, each one failing the run:
#   - systemd-analyze verify is clean; systemd-analyze security's exposure
#     is printed (and must be rated OK);
#   - the unit is active; its process runs as a dynamic user (not root),
#     with no capabilities, no_new_privs and a seccomp filter;
#   - the secrets reach it only as files under $CREDENTIALS_DIRECTORY: they
#     are not in its environment, in `systemctl show`, or in the journal;
#   - /healthz answers ok on 127.0.0.1:8000; MCP without the token → 401;
#     with the token: initialize and a read-only tools/list;
#   - with a drop-in turning read-only off, it restarts and creates the
#     audit log (0600) in its StateDirectory, owned by the dynamic user;
#   - systemctl stop: SIGTERM, exit status 0, Result=success.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${CONTAINER_PODMAN:?run by ci/container.sh}" "${CONTAINER_BINARY:?}" "${CONTAINER_WORK:?}"
W="$CONTAINER_WORK/systemd"
NAME="psm-systemd-$$"
UNIT=proxmox-safe-mcp.service

say() { printf 'container-systemd: %s\n' "$*" >&2; }
fail() { printf 'container-systemd: FAIL: %s\n' "$*" >&2; exit 1; }
pm() { "$CONTAINER_PODMAN" "$@"; }
in_ct() { pm exec "$NAME" "$@"; }

if [[ ! -x /usr/lib/systemd/systemd ]]; then
  say "installing systemd"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends systemd >/dev/null
fi
command -v curl >/dev/null || fail "curl is needed in /usr (ci/container.sh installs it)"

# --- the root file system: /usr from the host, a fresh /etc ------------------
R="$W/root"
mkdir -p "$R"/{etc/systemd/system/multi-user.target.wants,etc/proxmox-safe-mcp,var/lib,var/log,var/tmp,run,tmp,proc,sys,dev,root,usr} "$W/localbin"
for l in bin lib lib64 sbin; do ln -s "usr/$l" "$R/$l"; done
cp /etc/passwd /etc/group /etc/nsswitch.conf "$R/etc/"
ln -s ../usr/lib/os-release "$R/etc/os-release"
: >"$R/etc/machine-id"
cp "$ROOT/deploy/systemd/$UNIT" "$R/etc/systemd/system/"
ln -s "../$UNIT" "$R/etc/systemd/system/multi-user.target.wants/$UNIT"
# The credentials, as the unit's header says.
PVE_SECRET="pve-secret-$RANDOM$RANDOM$RANDOM"
TOKEN="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s' "$PVE_SECRET" >"$R/etc/proxmox-safe-mcp/pve_token_secret"
printf '%s\n' "$TOKEN" >"$R/etc/proxmox-safe-mcp/mcp_auth_token"
chmod 0700 "$R/etc/proxmox-safe-mcp"
chmod 0600 "$R/etc/proxmox-safe-mcp/"*
cp "$CONTAINER_BINARY" "$W/localbin/proxmox-safe-mcp"

say "booting systemd in a container"
pm run -d --name "$NAME" --systemd=always \
  -v /usr:/usr:ro -v "$W/localbin:/usr/local/bin:ro" \
  --rootfs "$R" /usr/lib/systemd/systemd >"$W/run.log" 2>&1 || { cat "$W/run.log" >&2; fail "podman run"; }
state=""
for i in $(seq 1 100); do
  state="$(in_ct systemctl is-system-running 2>/dev/null || true)"
  [[ $state == running || $state == degraded ]] && break
  ((i < 100)) || fail "systemd did not finish booting within 20s (state: $state)"
  sleep 0.2
done
[[ $state == running ]] || fail "systemd is $state: $(in_ct systemctl --failed --no-pager 2>&1)"
say "systemd $(in_ct systemctl --version | head -n 1 | cut -d' ' -f2) is PID 1 and $state"

in_ct systemd-analyze verify "/etc/systemd/system/$UNIT" >"$W/verify.log" 2>&1 ||
  { cat "$W/verify.log" >&2; fail "systemd-analyze verify"; }
[[ ! -s "$W/verify.log" ]] || { cat "$W/verify.log" >&2; fail "systemd-analyze verify printed warnings"; }
exposure="$(in_ct systemd-analyze security "$UNIT" --no-pager 2>&1 | grep -o 'Overall exposure level.*' || true)"
[[ $exposure == *" OK"* ]] || fail "systemd-analyze security: ${exposure:-no rating}"
say "systemd-analyze verify clean; security: ${exposure#*: }"

# --- the running service -----------------------------------------------------
for i in $(seq 1 50); do
  [[ $(in_ct curl -s -m 2 http://127.0.0.1:8000/healthz 2>/dev/null || true) == ok ]] && break
  ((i < 50)) || fail "/healthz not ok within 10s: $(in_ct journalctl -u "$UNIT" --no-pager 2>&1 | tail -n 5)"
  sleep 0.2
done
[[ $(in_ct systemctl is-active "$UNIT") == active ]] || fail "the unit is not active"
PID="$(in_ct systemctl show -p MainPID --value "$UNIT")"
status="$(in_ct cat "/proc/$PID/status")"
uid="$(awk '/^Uid:/ {print $2}' <<<"$status")"
# systemd allocates dynamic users from 61184–65519.
((uid >= 61184 && uid <= 65519)) || fail "the service runs as uid $uid, not a dynamic user"
grep -qP '^CapEff:\t0+$' <<<"$status" || fail "capabilities: $(grep ^CapEff <<<"$status")"
grep -qP '^CapBnd:\t0+$' <<<"$status" || fail "bounding set: $(grep ^CapBnd <<<"$status")"
grep -qP '^NoNewPrivs:\t1$' <<<"$status" || fail "no_new_privs not set"
grep -qP '^Seccomp:\t2$' <<<"$status" || fail "no seccomp filter (SystemCallFilter)"
say "active as dynamic uid $uid: no capabilities, no_new_privs, seccomp filter"

in_ct cat "/proc/$PID/environ" | tr '\0' '\n' >"$W/environ.txt"
grep -qx 'PVE_API_TOKEN_SECRET_FILE=/run/credentials/proxmox-safe-mcp.service/pve_token_secret' "$W/environ.txt" ||
  fail "PVE_API_TOKEN_SECRET_FILE does not point into the credentials directory"
in_ct systemctl show "$UNIT" >"$W/show.txt"
in_ct journalctl -u "$UNIT" --no-pager >"$W/journal.txt" 2>&1
for f in environ show journal; do
  if grep -qF -e "$PVE_SECRET" -e "$TOKEN" "$W/$f.txt"; then fail "a secret appears in the service's $f"; fi
done
say "secrets only as credential files: not in the environment, systemctl show or the journal"

JSON=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci-systemd","version":"1"}}}'
code="$(in_ct curl -s -o /dev/null -w '%{http_code}' "${JSON[@]}" -d "$INIT" http://127.0.0.1:8000/mcp)"
[[ $code == 401 ]] || fail "initialize without a token: HTTP $code, want 401"
in_ct curl -s -D - "${JSON[@]}" -H "Authorization: Bearer $TOKEN" -d "$INIT" http://127.0.0.1:8000/mcp >"$W/init.txt"
SID="$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$W/init.txt" | tr -d '\r')"
[[ -n "$SID" ]] || fail "initialize with the token: $(head -n 1 "$W/init.txt")"
S=(-H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-06-18')
in_ct curl -s -o /dev/null "${JSON[@]}" "${S[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' http://127.0.0.1:8000/mcp
tools="$(in_ct curl -s "${JSON[@]}" "${S[@]}" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' http://127.0.0.1:8000/mcp |
  sed -n 's/^data: //p' | jq -c '[.result.tools[].name]')"
jq -e 'index("list_guests") and (index("guest_power") | not)' <<<"$tools" >/dev/null ||
  fail "tools/list (the unit is read-only) is $tools"
say "/healthz ok; no token → 401; with the token from LoadCredential: initialize, tools/list ($(jq length <<<"$tools") read tools)"

# --- mutations enabled: the audit log in the StateDirectory ------------------
in_ct sh -c "mkdir -p /etc/systemd/system/$UNIT.d && printf '[Service]\nEnvironment=PROXMOX_SAFE_READ_ONLY=false\n' >/etc/systemd/system/$UNIT.d/ci.conf && systemctl daemon-reload && systemctl restart $UNIT"
for i in $(seq 1 50); do
  [[ $(in_ct curl -s -m 2 http://127.0.0.1:8000/healthz 2>/dev/null || true) == ok ]] && break
  ((i < 50)) || fail "not serving after the restart with mutations: $(in_ct journalctl -u "$UNIT" --no-pager 2>&1 | tail -n 5)"
  sleep 0.2
done
audit="$(in_ct stat -c '%a %U' /var/lib/private/proxmox-safe-mcp/audit.jsonl 2>&1)" ||
  fail "no audit log in the StateDirectory: $audit"
[[ $audit == "600 proxmox-safe-mcp" ]] || fail "audit log mode/owner: $audit"
say "read-only off (drop-in): restarted; audit log /var/lib/proxmox-safe-mcp/audit.jsonl is 0600, owned by the dynamic user"

in_ct systemctl stop "$UNIT"
result="$(in_ct systemctl show -p Result -p ExecMainStatus "$UNIT" | sort | tr '\n' ' ')"
[[ $result == "ExecMainStatus=0 Result=success " ]] || fail "systemctl stop: $result"
say "systemctl stop: exit status 0, Result=success"
pm rm -f -t 5 "$NAME" >/dev/null 2>&1 || true
