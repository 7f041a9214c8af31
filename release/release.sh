#!/usr/bin/env bash
# Builds a whole release into OUT (default dist/):
#   bash release/release.sh v0.1.0 [OUT]
# archives + SHA256SUMS (go run ./release), an SBOM per binary
# (CycloneDX, cyclonedx-gomod), one MCP Bundle per platform (npm
# @anthropic-ai/mcpb: validate, then pack), and server.json for the MCP
# Registry with each bundle's SHA-256, checked against the registry schema.
# SHA256SUMS (written by the second go run) lists archives, SBOMs and bundles.
# Needs: go, npm/npx (the bundle tool is installed into a temporary npm
# prefix unless MCPB is set to an mcpb command).
# TARGETS (optional) overrides the platforms, e.g. TARGETS=linux/amd64.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: release.sh VERSION [OUT]}
out=${2:-dist}
# The platforms are the release program's own list (defaultTargets) unless
# TARGETS names others.
targets=()
if [[ -n "${TARGETS:-}" ]]; then targets=(-targets "$TARGETS"); fi
# Pinned tools: the same versions build every release.
MCPB_VERSION=2.1.2
CYCLONEDX_VERSION=v1.10.0

go run ./release -version "$version" -out "$out" "${targets[@]}"

echo "== SBOM (CycloneDX) per binary"
gobin=$(mktemp -d)
trap 'rm -rf "$gobin"' EXIT
GOBIN="$gobin" GOFLAGS=-mod=mod go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$CYCLONEDX_VERSION"
for dir in "$out"/build/*/; do
  plat=$(basename "$dir")
  bin=$(ls "$dir"proxmox-safe-mcp*)
  "$gobin/cyclonedx-gomod" bin -json -version "$version" -output "$out/proxmox-safe-mcp_${version#v}_${plat}.sbom.cdx.json" "$bin"
done

echo "== MCP Bundles (mcpb $MCPB_VERSION)"
if [[ -z "${MCPB:-}" ]]; then
  npm install --silent --no-audit --no-fund --prefix "$gobin/npm" "@anthropic-ai/mcpb@$MCPB_VERSION" >/dev/null
  MCPB="$gobin/npm/node_modules/.bin/mcpb"
fi
mkdir -p "$out/bundles"
for dir in "$out"/mcpb/*/; do
  name=$(basename "$dir")
  "$MCPB" validate "$dir/manifest.json"
  "$MCPB" pack "$dir" "$out/bundles/$name.mcpb" >/dev/null
done

go run ./release -version "$version" -out "$out" "${targets[@]}" -bundles "$out/bundles"
mv "$out"/bundles/*.mcpb "$out"/
rmdir "$out/bundles"
go run ./release -validate-server "$out/server.json"
echo "== release $version in $out:"
ls -1 "$out" | grep -v -e '^build$' -e '^mcpb$'
