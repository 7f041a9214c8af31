#!/usr/bin/env bash
# The release, built and checked as a user would receive it:
#   bash ci/release-smoke.sh
# Builds every platform's archive, SBOM and MCP Bundle (release/release.sh:
# mcpb validate + pack), checks SHA256SUMS with sha256sum -c, checks
# server.json against the MCP Registry schema, then unpacks the linux/amd64
# bundle and runs the binary inside it with --demo over stdio: initialize,
# tools/list, one call. --version must print the release version.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
say() { printf 'release-smoke: %s\n' "$*" >&2; }
fail() { printf 'release-smoke: FAIL: %s\n' "$*" >&2; exit 1; }
command -v unzip >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq unzip >/dev/null; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
version=v0.0.0-ci
bash release/release.sh "$version" "$WORK/dist"
dist="$WORK/dist"

(cd "$dist" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match the files"
for plat in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64; do
  ls "$dist"/proxmox-safe-mcp_0.0.0-ci_${plat}.{mcpb,sbom.cdx.json} >/dev/null || fail "$plat: bundle or SBOM missing"
  grep -q "proxmox-safe-mcp_0.0.0-ci_${plat}.mcpb" "$dist/server.json" || fail "server.json does not name the $plat bundle"
done
ls "$dist"/proxmox-safe-mcp_0.0.0-ci_windows_amd64.zip "$dist"/proxmox-safe-mcp_0.0.0-ci_linux_amd64.tar.gz >/dev/null

say "unpack the linux/amd64 bundle and run its binary with --demo over stdio"
mkdir "$WORK/bundle"
unzip -q "$dist/proxmox-safe-mcp_0.0.0-ci_linux_amd64.mcpb" -d "$WORK/bundle"
bin="$WORK/bundle/server/proxmox-safe-mcp"
[[ -x "$bin" ]] || fail "the bundle's binary is missing or not executable"
got=$("$bin" --version)
[[ "$got" == "proxmox-safe-mcp $version" ]] || fail "--version says '$got', want 'proxmox-safe-mcp $version'"
answers=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"release-smoke","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_guests","arguments":{}}}' \
  | timeout 60 "$bin" --demo 2>"$WORK/stderr")
grep -q '"id":2,.*"name":"list_guests"' <<<"$answers" || { cat "$WORK/stderr" >&2; fail "tools/list from the bundle's binary lacks list_guests"; }
grep -q '"id":3,"result":{.*"vmid":100' <<<"$answers" || { cat "$WORK/stderr" >&2; fail "list_guests from the bundle's binary did not list VM 100"; }
say "ok: 5 archives, 5 SBOMs, 5 bundles, SHA256SUMS, server.json valid; the bundle's binary serves the demo"
