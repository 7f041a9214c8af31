# Sourced by the CI checks that drive the built binary with the TypeScript
# MCP SDK's client (ci/elicit-smoke.sh, ci/chart-smoke.sh): the pinned
# version and its one install into ci/.cache (gitignored), shared by both.
# Needs ROOT, say and fail from the sourcing script; sets CACHE.
#
# Pinned: @modelcontextprotocol/sdk 1.32.2 (engines: Node >= 18; Debian's
# Node 20 works).
SDK_VERSION=1.32.2
CACHE="${ELICIT_CACHE:-$ROOT/ci/.cache/ts-sdk-$SDK_VERSION}"

command -v node >/dev/null || fail "node is not installed (apt-get install nodejs npm)"
command -v npm >/dev/null || fail "npm is not installed"
if [[ ! -d "$CACHE/node_modules/@modelcontextprotocol/sdk" ]]; then
  say "installing @modelcontextprotocol/sdk@$SDK_VERSION into $CACHE"
  mkdir -p "$CACHE"
  printf '{"private":true,"type":"module"}\n' >"$CACHE/package.json"
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$SDK_VERSION" >&2
fi
