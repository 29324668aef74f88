#!/usr/bin/env bash
# iii's own Node SDK test suite against eng (issue 26): run-iii-suite.sh <0.11.6|0.22.1> [vitest args]
# Needs the iii repository (IIIREPO, a git dir with the iii/v<version> tags) and the registry for
# npm install. Starts three eng engines on iii's own fixture configs, as iii's CI starts its engines
# (buses 49199, 49198, 49197; HTTP 3199), then runs the suite with III_URL / III_HTTP_URL.
set -u
V=${1:?version}; shift
IIIREPO=${IIIREPO:-/work/.mirror/iii-hq+iii/repo}
ENGROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
ROOT=${III_SUITE_DIR:-/tmp/iii-suite}/$V
if [ ! -d "$ROOT/sdk/packages/node/iii/node_modules" ]; then
  mkdir -p "$ROOT"
  git -C "$IIIREPO" archive "iii/v$V" sdk/packages/node/iii sdk/fixtures | tar -x -C "$ROOT"
  git -C "$IIIREPO" archive "iii/v$V" sdk/packages/node/helpers 2>/dev/null | tar -x -C "$ROOT" 2>/dev/null
  # the PDF the api-triggers tests stream is not in every snapshot: any bytes do (they compare with it)
  mkdir -p "$ROOT/sdk/test-assets"
  [ -s "$ROOT/sdk/test-assets/handbook.pdf" ] || (printf '%%PDF-1.4\n'; head -c 400000 /dev/urandom; printf '\n%%%%EOF\n') > "$ROOT/sdk/test-assets/handbook.pdf"
  # 0.22.1 names its helpers package as a pnpm workspace dependency: the published one is the same
  sed -i 's/"@iii-dev\/helpers": "workspace:\*"/"@iii-dev\/helpers": "'"$V"'"/' "$ROOT/sdk/packages/node/iii/package.json"
  (cd "$ROOT/sdk/packages/node/iii" && npm install --no-audit --no-fund --ignore-scripts) || exit 1
fi
# vitest aliases read the helpers' sources, whose imports resolve from the SDK's node_modules
[ -d "$ROOT/sdk/packages/node/helpers" ] && ln -sfn ../iii/node_modules "$ROOT/sdk/packages/node/helpers/node_modules"
W=$ROOT/work; rm -rf "$W"; mkdir -p "$W"/{main,backend,bridge}
PIDS=()
for pair in main:config-test.yaml backend:config-bridge-backend.yaml bridge:config-bridge.yaml; do
  IFS=: read -r d cfg <<<"$pair"
  (cd "$W/$d" && exec node --import "file://$ENGROOT/node_modules/tsx/dist/loader.mjs" "$ENGROOT/packages/engine/src/cli/main.ts" start -c "$ROOT/sdk/fixtures/$cfg" >"$W/$d.log" 2>&1) &
  PIDS+=($!)
done
for port in 49199 49198 49197; do
  for _ in $(seq 1 120); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 1; done
done
cd "$ROOT/sdk/packages/node/iii"
III_URL=ws://localhost:49199 III_HTTP_URL=http://localhost:3199 npx vitest run "$@" >"$W/vitest.log" 2>&1
rc=$?
for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
wait
grep -E "Test Files|Tests |×" "$W/vitest.log"
echo "full log: $W/vitest.log"
exit $rc
