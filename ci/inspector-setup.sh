# Sourced by ci/inspector-smoke.sh and ci/sse-smoke.sh: the Node the
# inspector wants (>= 22.19; node@22 from npm into $CACHE when the system's
# is older, unless INSPECTOR_NODE=system) and the pinned inspector, in the
# same cache for both. Expects CACHE, INSPECTOR_VERSION and say/fail; sets
# NODE_BIN and INSPECTOR and puts node@22 first on PATH when installed.

NODE_PIN=22
node_ok() { # true when $1 (a node binary) is >= 22.19
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)'
}
NODE_BIN="$(command -v node)"
if ! node_ok "$NODE_BIN" && [[ "${INSPECTOR_NODE:-auto}" != system ]]; then
  N22="$CACHE/node-$NODE_PIN"
  if [[ ! -x "$N22/node_modules/.bin/node" ]] || ! node_ok "$N22/node_modules/.bin/node"; then
    say "system Node $(node --version) is older than the inspector wants; installing node@$NODE_PIN into $N22"
    mkdir -p "$N22"
    npm install --prefix "$N22" --no-audit --no-fund --loglevel=error "node@$NODE_PIN" >&2 || true
  fi
  if [[ -x "$N22/node_modules/.bin/node" ]] && node_ok "$N22/node_modules/.bin/node"; then
    export PATH="$N22/node_modules/.bin:$PATH"
    NODE_BIN="$N22/node_modules/.bin/node"
  else
    say "warning: node@$NODE_PIN unavailable; using system Node $(node --version) (unsupported by the inspector, but verified with 2.12.0)"
  fi
fi
say "node $("$NODE_BIN" --version)"

IDIR="$CACHE/inspector-$INSPECTOR_VERSION"
INSPECTOR="$IDIR/node_modules/.bin/inspector"
installed_version() {
  "$NODE_BIN" -p 'require(process.argv[1]).version' "$IDIR/node_modules/@modelcontextprotocol/inspector/package.json" 2>/dev/null || true
}
if [[ ! -x "$INSPECTOR" || "$(installed_version)" != "$INSPECTOR_VERSION" ]]; then
  say "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $IDIR"
  mkdir -p "$IDIR"
  # --ignore-scripts: the postinstall only sets up optional GUI clients.
  npm install --prefix "$IDIR" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
fi
[[ "$(installed_version)" == "$INSPECTOR_VERSION" ]] || fail "inspector $INSPECTOR_VERSION did not install"
