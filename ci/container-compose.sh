#!/usr/bin/env bash
# Checks docker-compose.yml with .env.example, then runs it as shipped.
# Called by ci/container.sh, which built the image and provides a private
# podman (CONTAINER_PODMAN), the image (CONTAINER_IMAGE) and a work
# directory it removes afterwards (CONTAINER_WORK); it also removes every
# container, volume and network this script leaves behind.
#
# 1. Static, with the loader `docker compose` itself uses (compose-go,
#    pinned below, built from the Go module proxy into the work directory;
#    the Docker client here has no compose plugin and there is no engine):
#    .env is read; the port is published on 127.0.0.1 only; read-only root,
#    no capabilities, no-new-privileges; both secrets are files mounted
#    under /run/secrets and read through *_FILE settings; every variable
#    passed is a documented setting; a secret written into .env does not
#    reach the container; a missing PVE_URL stops compose with a message
#    naming it; the shell's environment wins over .env.
# 2. Running: podman-compose (Debian's 1.0.3) starts the unmodified file
#    with .env.example's values and secrets made as its header says. The
#    server starts (it reads both secret files at startup) and serves
#    /healthz on 127.0.0.1:PORT; no token → 401; with the token,
#    initialize and tools/list work, and the list is read-only (the
#    compose default): no mutation tool. Stopping it exits 0.
#    There is no Proxmox here, so no tool that calls Proxmox is run (the
#    tool call over HTTP is ci/container.sh's, with --demo).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${CONTAINER_PODMAN:?run by ci/container.sh}" "${CONTAINER_IMAGE:?}" "${CONTAINER_WORK:?}"
COMPOSE_GO=v2.16.2
W="$CONTAINER_WORK/compose"
PROJECT=psmci$$

say() { printf 'container-compose: %s\n' "$*" >&2; }
fail() { printf 'container-compose: FAIL: %s\n' "$*" >&2; exit 1; }
pm() { "$CONTAINER_PODMAN" "$@"; }

if ! command -v podman-compose >/dev/null; then
  say "installing podman-compose"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends podman-compose >/dev/null
fi

# --- 1. static: compose-go --------------------------------------------------
mkdir -p "$W/tool" "$W/project"
cat >"$W/tool/main.go" <<'EOF'
// compose-config prints the project `docker compose config --format json`
// would print: compose-go with the options docker compose sets (working
// directory, OS environment, .env, COMPOSE_FILE, default file names).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	wd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	opts, err := cli.NewProjectOptions(nil,
		cli.WithWorkingDirectory(wd),
		cli.WithOsEnv,
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithConfigFileEnv,
		cli.WithDefaultConfigPath,
		cli.WithName("proxmox-safe-mcp"),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		fail(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(append(b, '\n'))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compose-config:", err)
	os.Exit(1)
}
EOF
printf 'module compose-config\n\ngo 1.24\n' >"$W/tool/go.mod"
(
  cd "$W/tool"
  export GOFLAGS=-mod=mod
  go get "github.com/compose-spec/compose-go/v2@$COMPOSE_GO" >/dev/null 2>&1 &&
    go mod tidy >/dev/null 2>&1 &&
    go build -o "$W/compose-config" .
) || fail "building compose-go $COMPOSE_GO from the Go module proxy"

P="$W/project"
cp "$ROOT/docker-compose.yml" "$P/"
config() { (cd "$P" && env -u PVE_URL -u PVE_API_TOKEN_ID -u MCP_PUBLISH_PORT "$@" "$W/compose-config"); }

cp "$ROOT/.env.example" "$P/.env"
cfg="$(config)" || fail "docker-compose.yml with .env.example does not load"
svc="$(jq '.services["proxmox-safe-mcp"]' <<<"$cfg")"
check() { # check JQ-EXPR MESSAGE: fail unless the expression holds for the service
  jq -e "$1" <<<"$svc" >/dev/null || fail "$2: $(jq -c "${3:-.}" <<<"$svc")"
}
check '.ports == [{"mode":"ingress","host_ip":"127.0.0.1","target":8000,"published":"8000","protocol":"tcp"}]' \
  "the port must be published on 127.0.0.1:8000 only" .ports
check '.read_only == true' "read_only" .read_only
check '.cap_drop == ["ALL"]' "cap_drop" .cap_drop
check '.security_opt == ["no-new-privileges:true"]' "security_opt" .security_opt
check '.environment.PVE_URL == "https://pve1.example.com:8006" and .environment.PVE_API_TOKEN_ID == "automation@pve!mcp"' \
  ".env values did not reach the environment" .environment
check '.environment.PROXMOX_SAFE_READ_ONLY == "true"' "read-only must be the compose default" .environment
check '.environment.MCP_HTTP_ADDR == "0.0.0.0:8000" and .environment.MCP_ALLOWED_HOSTS == "127.0.0.1,localhost"' \
  "listen address and allowed hosts" .environment
check '([.secrets[] | "\(.source)=\(.target)"] | sort) == ["mcp_auth_token=/run/secrets/mcp_auth_token","pve_token_secret=/run/secrets/pve_token_secret"]' \
  "secrets must be mounted at /run/secrets" .secrets
check '.environment.PVE_API_TOKEN_SECRET_FILE == "/run/secrets/pve_token_secret" and .environment.MCP_AUTH_TOKEN_FILE == "/run/secrets/mcp_auth_token"' \
  "the *_FILE settings must point at the mounted secrets" .environment
check '(.environment | keys | map(select(test("SECRET$|^MCP_AUTH_TOKEN$|PASSWORD$")))) == []' \
  "a secret must not be passed as a variable" '.environment | keys'
check '.volumes == [{"type":"volume","source":"audit","target":"/data","volume":{}}] and .environment.PROXMOX_SAFE_AUDIT_LOG == "/data/audit.jsonl"' \
  "the audit log must be on the audit volume" .volumes
check '.stop_grace_period == "30s"' "stop_grace_period (more than MCP_SHUTDOWN_TIMEOUT)" .stop_grace_period
jq -e --arg p "$P/secrets/" '[.secrets[].file | startswith($p)] | all' <<<"$cfg" >/dev/null ||
  fail "secret files must come from ./secrets/: $(jq -c .secrets <<<"$cfg")"
for k in $(jq -r '.environment | keys[]' <<<"$svc"); do
  grep -q "\`$k\`" "$ROOT/docs/CONFIGURATION.md" || fail "$k is passed by docker-compose.yml but not documented in docs/CONFIGURATION.md"
done
say "compose-go $COMPOSE_GO: .env read, 127.0.0.1 only, read-only, no capabilities, secrets from files, documented settings"

# A secret written into .env by mistake must not reach the container:
# only the variables docker-compose.yml names are passed.
canary="canary-$RANDOM$RANDOM$RANDOM"
printf 'PVE_API_TOKEN_SECRET=%s\nMCP_AUTH_TOKEN=%s\nPVE_PASSWORD=%s\n' "$canary" "$canary" "$canary" >>"$P/.env"
config | grep -qF "$canary" && fail "a secret in .env reached the compose project"
# The shell's environment wins over .env (docker compose's rule).
[[ $(config MCP_PUBLISH_PORT=18001 | jq -r '.services[].ports[0] | "\(.host_ip):\(.published)"') == 127.0.0.1:18001 ]] ||
  fail "MCP_PUBLISH_PORT from the environment did not win over .env"
# Without PVE_URL, compose refuses with the message from the file.
grep -v '^PVE_URL=' "$ROOT/.env.example" >"$P/.env"
if config >"$W/no-url.out" 2>"$W/no-url.err"; then fail "compose accepted a missing PVE_URL"; fi
grep -q 'set PVE_URL in .env' "$W/no-url.err" || fail "missing PVE_URL: unexpected error: $(cat "$W/no-url.err")"
say "a secret in .env is not passed; the environment wins over .env; no PVE_URL → \"$(grep -o 'set PVE_URL[^,]*' "$W/no-url.err")\""

# --- 2. running: podman-compose ---------------------------------------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 20000))
  if port_free "$p"; then PORT=$p; break; fi
done
[[ -n "$PORT" ]] || fail "no free port"
sed "s/^MCP_PUBLISH_PORT=.*/MCP_PUBLISH_PORT=$PORT/" "$ROOT/.env.example" >"$P/.env"
# The secrets, as docker-compose.yml's header says.
mkdir -p "$P/secrets"
printf '%s' "pve-secret-$RANDOM$RANDOM$RANDOM" >"$P/secrets/pve_token_secret"
TOKEN="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$TOKEN" >"$P/secrets/mcp_auth_token"
chmod 0400 "$P/secrets/"*
chown 65532:65532 "$P/secrets/"*
# `build: .` is satisfied by the image ci/container.sh built, under the
# name the file gives it (podman-compose builds only when it is missing).
pm tag "$CONTAINER_IMAGE" localhost/proxmox-safe-mcp:local
pc() { (cd "$P" && podman-compose --podman-path "$CONTAINER_PODMAN" -p "$PROJECT" "$@"); }
down() { pc down >/dev/null 2>&1 || true; }
trap down EXIT
say "podman-compose up (docker-compose.yml as shipped, .env.example with port $PORT)"
pc up -d >"$W/up.log" 2>&1 || { cat "$W/up.log" >&2; fail "podman-compose up"; }
NAME="$(pm ps -a -q --filter "label=io.podman.compose.project=$PROJECT")"
[[ -n "$NAME" ]] || { cat "$W/up.log" >&2; fail "podman-compose up started no container"; }

BASE="http://127.0.0.1:$PORT"
for i in $(seq 1 100); do
  [[ $(curl -s -m 2 "$BASE/healthz" || true) == ok ]] && break
  [[ $(pm inspect -f '{{.State.Running}}' "$NAME") == true ]] || fail "the service exited: $(pm logs "$NAME" 2>&1 | tail -n 5)"
  ((i < 100)) || fail "/healthz did not answer ok within 20s: $(pm logs "$NAME" 2>&1 | tail -n 5)"
  sleep 0.2
done
ports="$(pm port "$NAME")"
[[ $ports == "8000/tcp -> 127.0.0.1:$PORT" ]] || fail "published ports: $ports"
[[ $(pm inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$NAME") == true ]] || fail "root file system is writable"
say "running: /healthz ok, published only as $ports, read-only root"

JSON=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
AUTH=(-H "Authorization: Bearer $TOKEN")
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"ci-compose","version":"1"}}}'
code="$(curl -s -o /dev/null -w '%{http_code}' "${JSON[@]}" -d "$INIT" "$BASE/mcp")"
[[ $code == 401 ]] || fail "initialize without a token: HTTP $code, want 401"
rpc_body() { sed -n -e 's/^data: //p' -e t -e '/^{/p' "$1"; }
curl -s -D "$W/init.h" -o "$W/init.b" "${JSON[@]}" "${AUTH[@]}" -d "$INIT" "$BASE/mcp"
SID="$(awk 'tolower($1) == "mcp-session-id:" {print $2}' "$W/init.h" | tr -d '\r')"
[[ -n "$SID" ]] || fail "initialize with the token from secrets/mcp_auth_token: $(head -n 1 "$W/init.h")"
SESSION=(-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-06-18')
curl -s -o /dev/null "${JSON[@]}" "${AUTH[@]}" "${SESSION[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$BASE/mcp"
curl -s -o "$W/list.b" "${JSON[@]}" "${AUTH[@]}" "${SESSION[@]}" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' "$BASE/mcp"
tools="$(rpc_body "$W/list.b" | jq -c '[.result.tools[].name]')"
jq -e 'index("list_guests") and (index("guest_power") | not) and (index("snapshot_guest") | not)' <<<"$tools" >/dev/null ||
  fail "tools/list under the compose defaults (read-only) is $tools"
say "no token → 401; with the token: initialize, tools/list ($(jq length <<<"$tools") read tools, no mutation tool)"

pc stop >"$W/stop.log" 2>&1 || { cat "$W/stop.log" >&2; fail "podman-compose stop"; }
[[ $(pm inspect -f '{{.State.ExitCode}}' "$NAME") == 0 ]] || fail "stop: exit code $(pm inspect -f '{{.State.ExitCode}}' "$NAME")"
pm logs "$NAME" >"$W/service.log" 2>&1
grep -qF -e "$TOKEN" -e "$(cat "$P/secrets/pve_token_secret")" "$W/service.log" && fail "a secret appears in the service log"
say "stopped with exit code 0; no secret in the log"
