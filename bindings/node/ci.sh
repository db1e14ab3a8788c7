#!/usr/bin/env bash
# Builds and tests the Node.js package, as .ci/run calls it from the repository root after the
# Rust tests: installs Debian's nodejs and npm when node is missing, installs the locked dev
# dependencies and builds the native module with cargo (release, in the workspace's target/,
# which the Rust build has filled), type-checks a typed example against index.d.ts (tsc), then
# runs `npm test` (node --test; the Redis tests start their own redis-server, the Unix socket
# tests their own nginx; jest runs the peer libraries' own suites under test/peer/).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
fi
if ! command -v redis-server >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server
fi
# The TLS and Sentinel tests make certificates with openssl and start redis-sentinel.
for tool in openssl redis-sentinel; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$tool"
  fi
done
# The Unix socket tests run behind a real nginx (started and stopped by the tests).
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light
fi
echo "node $(node --version), npm $(npm --version)"

npm ci --no-audit --no-fund
npm run typecheck   # tsc over test/types/example.ts: index.d.ts stays true to the API
npm test
