#!/usr/bin/env bash
# Builds the container image the Dockerfile describes, runs it the way
# docker-compose.yml runs it, and checks it from the outside. No Docker
# engine and no registry are needed: podman (Debian's package) with runc,
# vfs storage and cgroupfs, everything under one temporary directory.
#
#   bash ci/container.sh          (as root; installs its Debian packages)
#
# How the image is built (docs/DEPLOYMENT.md, "How CI builds the image
# without Docker"):
# deploy/container/rootfs.sh assembles the image's files on the host, and
# `podman build --build-context build=DIR` builds the Dockerfile's final
# stage with that directory standing in for its "build" stage (whose
# golang base image cannot be pulled here). Same Dockerfile, same final
# stage, same file list; only where the Go toolchain runs differs.
#
# Checks, each one failing the run:
#   image    user 65532:65532, HEALTHCHECK, entrypoint, and exactly the
#            expected files (binary, CA bundle, /tmp, /data owned by 65532)
#   run      as docker-compose.yml does: port published on 127.0.0.1 only,
#            read-only root, all capabilities dropped, no-new-privileges,
#            token from a file mounted at /run/secrets, a volume on /data;
#            --demo (no Proxmox here). The image's own MCP_ALLOWED_HOSTS
#            must let the client reach it through the mapped port
#   health   GET /healthz is "ok"; the image's own HEALTHCHECK passes
#   MCP      over streamable HTTP through the published port: no token → 401,
#            foreign Host → 403; with the bearer token: initialize,
#            tools/call list_guests, guest_power with its approval phrase
#            (a mutation, so an audit record must land in the /data volume)
#   identity the process runs as uid/gid 65532 with no capabilities and
#            no_new_privs; "/" is mounted read-only; a second container
#            with a read-only root cannot create a file (the demo's
#            temporary audit log) and fails with "read-only file system",
#            while the same command succeeds with a writable root
#   secrets  the token appears in no log line and no audit record
#   stop     SIGTERM (podman stop) ends it with exit code 0
#   aliases  started with another server's MCP_TRANSPORT (streamable-http
#            or sse), MCP_HOST, MCP_PORT instead (port 8000, or 3000: the
#            image's MCP_IMAGE_HTTP_ADDR yields), it serves and its
#            HEALTHCHECK passes
#   compose  ci/container-compose.sh: docker-compose.yml checked with
#            compose-go and run as shipped with podman-compose
#   systemd  ci/container-systemd.sh: the unit as shipped, under systemd
#            booted as PID 1 of a container
#
# Cleans up on every exit: containers, volume, image store, mounts, the
# firewall chains netavark created (only when there were none before) and
# the temporary directory.
#
# Environment:
#   CONTAINER_KEEP=1        keep the temporary directory (for debugging)
#   CONTAINER_FULL_BUILD=1  also build the whole Dockerfile on a stand-in
#                           golang image and compare (ci/container-fullbuild.sh;
#                           about 7 minutes, so not in .ci/run)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE=localhost/proxmox-safe-mcp:ci
NAME="psm-ci-$$"
START=$SECONDS

say() { printf 'container: %s\n' "$*" >&2; }
fail() { printf 'container: FAIL: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) == 0 ]] || fail "run as root (podman with runc and cgroupfs, as CI does)"
command -v go >/dev/null || fail "go is not installed"

# --- tools --------------------------------------------------------------
# podman embeds buildah for `podman build`; runc because crun fails on this
# machine's hybrid cgroups; netavark and iptables for the published port,
# aardvark-dns for the network podman-compose creates. No recommended
# packages (buildah, slirp4netns, fuse-overlayfs, uidmap: rootless and
# overlay tools this root + vfs setup does not use).
PKGS=(podman runc netavark aardvark-dns iptables curl jq ca-certificates)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- a private podman ---------------------------------------------------
W="$(mktemp -d /var/tmp/psm-container.XXXXXX)"
chmod 0755 "$W"
# Netavark adds firewall chains the first time it publishes a port and
# leaves them behind; remove them afterwards unless they were there before.
had_netavark=0
if iptables -S 2>/dev/null | grep -q NETAVARK || iptables -t nat -S 2>/dev/null | grep -q NETAVARK; then
  had_netavark=1
fi
ip_forward="$(cat /proc/sys/net/ipv4/ip_forward)"
# State podman keeps outside --root/--runroot whatever the flags (netavark's
# IPAM database, the blob-info cache): removed afterwards if new.
created=()
for d in /var/lib/containers /var/lib/containers/cache /run/containers; do
  [[ -e $d ]] || created+=("$d")
done

# The sandbox refuses setrlimit, so no default ulimits; no systemd, so
# cgroupfs and a file event log.
cat >"$W/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
network_backend = "netavark"
EOF
# A podman that keeps everything under $W: a script, so that
# podman-compose (ci/container-compose.sh) can use it too.
mkdir -p "$W/bin"
cat >"$W/bin/podman" <<EOF
#!/bin/sh
export CONTAINERS_CONF="$W/containers.conf"
exec $(command -v podman) --root "$W/storage" --runroot "$W/run" --tmpdir "$W/libpod" \\
  --network-config-dir "$W/networks" --storage-driver vfs \\
  --runtime runc --cgroup-manager cgroupfs --events-backend file "\$@"
EOF
chmod 0755 "$W/bin/podman"
pm() { "$W/bin/podman" "$@"; }

drop_netavark_chains() {
  local t rule chain
  for t in nat filter; do
    iptables -t "$t" -S | grep -E '^-A [A-Z]+ .*-j NETAVARK' | sed 's/^-A /-D /' |
      while read -r rule; do eval "iptables -t $t $rule" || true; done
    for chain in $(iptables -t "$t" -S | awk '/^-N NETAVARK/ {print $2}'); do
      iptables -t "$t" -F "$chain" || true
    done
    for chain in $(iptables -t "$t" -S | awk '/^-N NETAVARK/ {print $2}'); do
      iptables -t "$t" -X "$chain" || true
    done
  done
}

cleanup() {
  local rc=$?
  set +e
  if ((rc != 0)) && [[ -n "${CID:-}" ]]; then
    say "container log:"; pm logs "$NAME" 2>&1 | tail -n 30 | sed 's/^/  | /' >&2
  fi
  pm rm -f -a -t 0 >/dev/null 2>&1
  pm volume rm -f -a >/dev/null 2>&1
  pm network rm -f $(pm network ls -q --filter label=io.podman.compose.project 2>/dev/null) >/dev/null 2>&1
  pm rmi -f -a >/dev/null 2>&1
  # Anything still mounted below the work directory (shm, volumes).
  awk -v w="$W" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
  ((had_netavark)) || drop_netavark_chains
  for d in "${created[@]}"; do rm -rf "$d"; done
  echo "$ip_forward" >/proc/sys/net/ipv4/ip_forward 2>/dev/null
  if [[ "${CONTAINER_KEEP:-}" == 1 ]]; then say "kept $W"; else rm -rf "$W"; fi
  exit "$rc"
}
trap cleanup EXIT

# --- build --------------------------------------------------------------
# The Dockerfile's build stage starts with COPY . . from the build context,
# which .dockerignore filters. Take the same filtered context (a throwaway
# image of it), so a needed file missing from it fails here too, and check
# that secrets, .git and tool caches stay out.
say "taking the build context through .dockerignore"
printf 'FROM scratch\nCOPY . /src/\n' >"$W/Context.Dockerfile"
pm build -q -f "$W/Context.Dockerfile" -t localhost/psm-context:ci "$ROOT" >"$W/context.log" 2>&1 ||
  { cat "$W/context.log" >&2; fail "podman build of the build context"; }
pm create --name "$NAME-ctx" localhost/psm-context:ci /none >/dev/null 2>&1
mkdir -p "$W/src"
pm export "$NAME-ctx" | tar -xf - -C "$W/src" --strip-components=1 src
pm rm "$NAME-ctx" >/dev/null 2>&1
for f in go.mod go.sum cmd/proxmox-safe-mcp deploy/container/rootfs.sh; do
  [[ -e "$W/src/$f" ]] || fail "$f is not in the build context (.dockerignore)"
done
for f in .git .env secrets ci/.cache node_modules; do
  [[ ! -e "$W/src/$f" ]] || fail "$f is in the build context: add it to .dockerignore"
done
say "building the image files with deploy/container/rootfs.sh (from that context)"
VERSION="ci-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
(cd "$W/src" && VERSION="$VERSION" sh deploy/container/rootfs.sh "$W/ctx/out")
say "building the Dockerfile's final stage (--build-context build=…)"
pm build -q --format docker --build-context "build=$W/ctx" -f "$ROOT/Dockerfile" -t "$IMAGE" "$ROOT" >"$W/build.log" 2>&1 ||
  { cat "$W/build.log" >&2; fail "podman build"; }

# --- the image ----------------------------------------------------------
img="$(pm image inspect "$IMAGE" | jq '.[0]')"
cfg="$(jq .Config <<<"$img")"
[[ $(jq -r .User <<<"$cfg") == 65532:65532 ]] || fail "image user is $(jq -r .User <<<"$cfg"), want 65532:65532"
[[ $(jq -c .Entrypoint <<<"$cfg") == '["/proxmox-safe-mcp"]' ]] || fail "entrypoint $(jq -c .Entrypoint <<<"$cfg")"
[[ $(jq -c .Healthcheck.Test <<<"$img") == '["CMD","/proxmox-safe-mcp","healthcheck"]' ]] ||
  fail "HEALTHCHECK missing from the image: $(jq -c .Healthcheck <<<"$img")"
[[ $(jq -r .StopSignal <<<"$cfg") == SIGTERM ]] || fail "stop signal $(jq -r .StopSignal <<<"$cfg")"
for e in MCP_IMAGE_HTTP_ADDR=0.0.0.0:8000 MCP_ALLOWED_HOSTS=127.0.0.1,localhost; do
  jq -e --arg e "$e" '.Env | index($e)' <<<"$cfg" >/dev/null || fail "$e not in the image's environment"
done
# The complete file list, with owner and mode: nothing else may be in it.
pm create --name "$NAME-files" "$IMAGE" >/dev/null 2>&1
pm export "$NAME-files" | tar -tvf - --numeric-owner |
  awk '{print $1, $2, $NF}' | sed 's#/$##' | sort >"$W/files"
pm rm "$NAME-files" >/dev/null 2>&1
cat >"$W/files.want" <<'EOF'
-rw-r--r-- 0/0 etc/ssl/certs/ca-certificates.crt
-rwxr-xr-x 0/0 proxmox-safe-mcp
drwxr-xr-x 65532/65532 data
drwxr-xr-x 0/0 etc
drwxr-xr-x 0/0 etc/ssl
drwxr-xr-x 0/0 etc/ssl/certs
drwxrwxrwt 0/0 tmp
EOF
# podman export adds the runtime's mount points (dev, proc, sys, run and a
# few files); they are not in the image's layer and are filtered out.
grep -vE ' (dev|proc|sys|run|etc/hosts|etc/hostname|etc/resolv.conf|\.)(/|$)' "$W/files" >"$W/files.got" || true
sort -o "$W/files.want" "$W/files.want"
diff -u "$W/files.want" "$W/files.got" >&2 || fail "the image's files differ from deploy/container/rootfs.sh's list"
say "image: $(du -k "$W/ctx/out/rootfs/proxmox-safe-mcp" | cut -f1) KiB binary, user 65532, files as expected"

# --- run it like docker-compose.yml --------------------------------------
TOKEN="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
mkdir -p "$W/secrets"
printf '%s\n' "$TOKEN" >"$W/secrets/mcp_auth_token"
# As docker-compose.yml's instructions say: readable by the image's user only.
chown 65532:65532 "$W/secrets/mcp_auth_token"
chmod 0400 "$W/secrets/mcp_auth_token"
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 20000))
  if port_free "$p"; then PORT=$p; break; fi
done
[[ -n "$PORT" ]] || fail "no free port"

say "starting it on 127.0.0.1:$PORT"
CID="$(pm run -d --name "$NAME" \
  -p "127.0.0.1:$PORT:8000" \
  --read-only --read-only-tmpfs=false \
  --cap-drop ALL --security-opt no-new-privileges \
  -v "$NAME-audit:/data" \
  -v "$W/secrets/mcp_auth_token:/run/secrets/mcp_auth_token:ro" \
  -e MCP_AUTH_TOKEN_FILE=/run/secrets/mcp_auth_token \
  -e PROXMOX_SAFE_AUDIT_LOG=/data/audit.jsonl \
  "$IMAGE" --demo 2>"$W/run.log")" || { cat "$W/run.log" >&2; fail "podman run"; }

BASE="http://127.0.0.1:$PORT"
for i in $(seq 1 100); do
  [[ $(curl -s -m 2 "$BASE/healthz" || true) == ok ]] && break
  [[ $(pm inspect -f '{{.State.Running}}' "$NAME") == true ]] || fail "the container exited: $(pm logs "$NAME" 2>&1 | tail -n 3)"
  ((i < 100)) || fail "/healthz did not answer ok within 20s"
  sleep 0.2
done
say "/healthz: ok"
# The image's HEALTHCHECK (the binary probing itself; no curl inside).
# podman logs that it has no systemd timer for it; the run itself is real.
pm healthcheck run "$NAME" >"$W/hc.log" 2>&1 || { cat "$W/hc.log" >&2; fail "the image's HEALTHCHECK failed"; }
say "HEALTHCHECK: healthy"

# --- MCP over streamable HTTP ---------------------------------------------
JSON=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
AUTH=(-H "Authorization: Bearer $TOKEN")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci-container","version":"1"}}}'
code="$(curl -s -o /dev/null -w '%{http_code}' "${JSON[@]}" -d "$INIT" "$BASE/mcp")"
[[ $code == 401 ]] || fail "initialize without a token: HTTP $code, want 401"
code="$(curl -s -o /dev/null -w '%{http_code}' "${JSON[@]}" "${AUTH[@]}" -H 'Host: evil.example:8000' -d "$INIT" "$BASE/mcp")"
[[ $code == 403 ]] || fail "initialize with a foreign Host: HTTP $code, want 403"
say "no token → 401, foreign Host → 403"

# Prints the JSON-RPC message of a response (plain JSON or one SSE event).
rpc_body() { sed -n -e 's/^data: //p' -e t -e '/^{/p' "$1"; }
curl -s -D "$W/init.h" -o "$W/init.b" "${JSON[@]}" "${AUTH[@]}" -d "$INIT" "$BASE/mcp"
SID="$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$W/init.h" | tr -d '\r')"
[[ -n "$SID" ]] || fail "initialize with the token: no Mcp-Session-Id ($(head -n 1 "$W/init.h"))"
rpc_body "$W/init.b" | jq -e '.result.serverInfo.name == "proxmox-safe-mcp"' >/dev/null ||
  fail "initialize: $(cat "$W/init.b")"
SESSION=(-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-06-18')
code="$(curl -s -o /dev/null -w '%{http_code}' "${JSON[@]}" "${AUTH[@]}" "${SESSION[@]}" \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$BASE/mcp")"
[[ $code == 202 ]] || fail "notifications/initialized: HTTP $code, want 202"
call() { # call ID TOOL ARGS → the JSON-RPC response
  curl -s "${JSON[@]}" "${AUTH[@]}" "${SESSION[@]}" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" \
    "$BASE/mcp" >"$W/call-$1"
  rpc_body "$W/call-$1"
}
out="$(call 2 list_guests '{}')"
jq -e '(.result.isError | not) and (.result.structuredContent.guests | length) > 0' <<<"$out" >/dev/null ||
  fail "list_guests: $out"
say "tools/call list_guests: $(jq -r '.result.content[0].text' <<<"$out")"
out="$(call 3 guest_power '{"node":"pve1","type":"qemu","vmid":100,"action":"shutdown","approval":"APPROVE shutdown pve1/qemu/100"}')"
jq -e '(.result.isError | not) and (.result.structuredContent | tostring | test("UPID:"))' <<<"$out" >/dev/null ||
  fail "guest_power with approval: $out"
UPID="$(jq -r '[.result.structuredContent | .. | strings | select(startswith("UPID:"))][0]' <<<"$out")"
say "tools/call guest_power (approved): receipt for $UPID"

# --- identity, read-only root, audit volume -------------------------------
PID="$(pm inspect -f '{{.State.Pid}}' "$NAME")"
status="$(cat "/proc/$PID/status")"
grep -qP '^Uid:\t65532\t65532\t65532\t65532$' <<<"$status" || fail "not running as uid 65532: $(grep ^Uid <<<"$status")"
grep -qP '^Gid:\t65532\t65532\t65532\t65532$' <<<"$status" || fail "not running as gid 65532: $(grep ^Gid <<<"$status")"
grep -qP '^CapEff:\t0+$' <<<"$status" || fail "effective capabilities: $(grep ^CapEff <<<"$status")"
grep -qP '^CapBnd:\t0+$' <<<"$status" || fail "bounding capabilities (cap_drop ALL): $(grep ^CapBnd <<<"$status")"
grep -qP '^NoNewPrivs:\t1$' <<<"$status" || fail "no_new_privs not set"
root_opts="$(awk '$5 == "/" {print $6}' "/proc/$PID/mountinfo")"
[[ ",$root_opts," == *,ro,* ]] || fail "the root file system is mounted $root_opts, want ro"
say "process: uid/gid 65532, no capabilities, no_new_privs; / mounted $root_opts"

# The volume was initialised from the image's /data (owned by 65532), so
# the audit log could be written; the approved mutation is recorded.
VOL="$(pm volume inspect -f '{{.Mountpoint}}' "$NAME-audit")"
[[ $(stat -c %u:%g "$VOL") == 65532:65532 ]] || fail "/data volume owned by $(stat -c %u:%g "$VOL")"
jq -e --arg upid "$UPID" 'select(.event == "submitted" and .op == "GuestPower" and .upid == $upid)' \
  "$VOL/audit.jsonl" >/dev/null || fail "no record of the submitted shutdown in the audit log on the /data volume"
say "audit log on the /data volume: $(wc -l <"$VOL/audit.jsonl") records"

# Behaviour, not only the mount flag: the demo's `call` creates a temporary
# audit log in /tmp, which a read-only root refuses, and which works with a
# writable one (so the refusal is the read-only root, not a missing /tmp).
if pm run --rm --read-only --read-only-tmpfs=false "$IMAGE" --demo call list_guests >"$W/ro.out" 2>"$W/ro.err"; then
  fail "a read-only root let the demo create its temporary audit log"
fi
grep -q 'read-only file system' "$W/ro.err" || fail "read-only root: unexpected error: $(cat "$W/ro.err")"
pm run --rm "$IMAGE" --demo call list_guests >"$W/rw.out" 2>"$W/rw.err" ||
  fail "with a writable root the same call failed: $(cat "$W/rw.err")"
say "read-only root refuses writes (\"read-only file system\"); the same call works with a writable root"

# --- secrets and stop ---------------------------------------------------
pm logs "$NAME" >"$W/service.log" 2>&1
if grep -qF "$TOKEN" "$W/service.log" "$VOL/audit.jsonl"; then fail "the bearer token appears in the log or the audit log"; fi
pm stop -t 30 "$NAME" >/dev/null 2>&1
[[ $(pm inspect -f '{{.State.ExitCode}}' "$NAME") == 0 ]] ||
  fail "SIGTERM: exit code $(pm inspect -f '{{.State.ExitCode}}' "$NAME"), want 0"
say "token in no log or audit record; SIGTERM → exit 0"

# Switching images: a compose file written for another Proxmox MCP server
# sets MCP_TRANSPORT/MCP_HOST/MCP_PORT (issue 12's aliases), with either
# HTTP transport. The image's address is only MCP_IMAGE_HTTP_ADDR, the
# lowest default, so any port works without touching our own names. Each
# must start, and the image's HEALTHCHECK must find it (it runs inside: no
# published port needed).
settings=(
  "MCP_TRANSPORT=streamable-http MCP_HOST=0.0.0.0 MCP_PORT=8000"
  "MCP_TRANSPORT=sse MCP_HOST=0.0.0.0 MCP_PORT=8000"
  "MCP_TRANSPORT=streamable-http MCP_HOST=0.0.0.0 MCP_PORT=3000"
  "MCP_PORT=3001"
)
for n in "${!settings[@]}"; do
  env_args=()
  for kv in ${settings[$n]}; do env_args+=(-e "$kv"); done
  pm run -d --name "$NAME-alias$n" --network none "${env_args[@]}" \
    -e MCP_AUTH_TOKEN_FILE=/run/secrets/mcp_auth_token \
    -v "$W/secrets/mcp_auth_token:/run/secrets/mcp_auth_token:ro" \
    "$IMAGE" --demo >/dev/null 2>"$W/alias.log" || { cat "$W/alias.log" >&2; fail "podman run (${settings[$n]})"; }
  for i in $(seq 1 50); do
    pm healthcheck run "$NAME-alias$n" >/dev/null 2>&1 && break
    [[ $(pm inspect -f '{{.State.Running}}' "$NAME-alias$n") == true ]] ||
      fail "with ${settings[$n]} the server exited: $(pm logs "$NAME-alias$n" 2>&1 | tail -n 3)"
    ((i < 50)) || fail "with ${settings[$n]} the HEALTHCHECK never passed"
    sleep 0.2
  done
  pm rm -f -t 5 "$NAME-alias$n" >/dev/null 2>&1
  say "another server's settings (${settings[$n]}): starts, HEALTHCHECK healthy"
done

# --- docker-compose.yml -----------------------------------------------------
CONTAINER_PODMAN="$W/bin/podman" CONTAINER_IMAGE="$IMAGE" CONTAINER_WORK="$W" \
  bash "$ROOT/ci/container-compose.sh"

# --- deploy/systemd -----------------------------------------------------------
CONTAINER_PODMAN="$W/bin/podman" CONTAINER_BINARY="$W/ctx/out/rootfs/proxmox-safe-mcp" CONTAINER_WORK="$W" \
  bash "$ROOT/ci/container-systemd.sh"

# --- opt-in: the whole Dockerfile, build stage included (slow) ---------------
if [[ "${CONTAINER_FULL_BUILD:-}" == 1 ]]; then
  CONTAINER_PODMAN="$W/bin/podman" CONTAINER_VERSION="$VERSION" CONTAINER_WORK="$W" \
    CONTAINER_BINARY="$W/ctx/out/rootfs/proxmox-safe-mcp" CONTAINER_FILES="$W/files.got" \
    bash "$ROOT/ci/container-fullbuild.sh"
fi

say "all checks passed in $((SECONDS - START))s"
