#!/usr/bin/env bash
# The Redis module as a user without Rust installs it, for this machine (x86_64 or aarch64;
# scripts/dist/test-arm64.sh runs this inside an arm64 Debian): dist/sluicegate-redis-module-*.so
# needs no glibc newer than 2.17, and Debian's redis-server loads it (`MODULE LIST`); then
# dist/'s sluicegate-server, run with `--redis-module` against that Redis, answers POST /json
# five times OK and then OVER_LIMIT (json-check.py), every decision made by
# SLUICEGATE.DECIDE and none by a script (`INFO commandstats`). Everything runs on 127.0.0.1 and is stopped by its PID.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
machine=$(uname -m)
module="$PWD/dist/sluicegate-redis-module-$version-$machine-linux-gnu.so"
server="$PWD/dist/sluicegate-server-$version-$machine-linux-gnu"
for file in "$module" "$server"; do
    [ -f "$file" ] || { echo "test-redis-module: $file is missing: run scripts/dist.sh first" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 \
    || { echo "test-redis-module: redis-server is missing (Debian: apt-get install redis-server)" >&2; exit 1; }

newest=$(grep -ao 'GLIBC_2\.[0-9]*' "$module" | sort -uV | tail -1)
case "$newest" in
    GLIBC_2.1[0-7]|GLIBC_2.[0-9]) echo "ok: the module needs $newest at most" ;;
    *) echo "test-redis-module: the module needs $newest, newer than glibc 2.17" >&2; exit 1 ;;
esac

work=$(mktemp -d /tmp/sluicegate-dist-module.XXXXXX)
trap 'rm -rf "$work"' EXIT
bash scripts/dist/without-rust.sh "$work/home" bash -s "$module" "$server" "$work" "$PWD/scripts/dist" <<'SH'
set -euo pipefail
module=$1 server=$2 work=$3 checks=$4
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
redis_port=$(port) http=$(port) grpc=$(port)
pids=()
# Redis on arm64 probes the kernel for a copy-on-write bug and, under qemu, cannot: it saves
# nothing here (--save ''), so the probe's answer does not matter.
arm64_flags=()
[ "$(uname -m)" != aarch64 ] || arm64_flags=(--ignore-warnings ARM64-COW-BUG)
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
mkdir -p "$work/redis"
(cd "$work/redis" && exec redis-server --port "$redis_port" --bind 127.0.0.1 --save '' \
    --appendonly no --loadmodule "$module" "${arm64_flags[@]}") >"$work/redis.log" 2>&1 &
pids+=($!)
cli() { redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
for _ in $(seq 100); do cli PING >/dev/null 2>&1 && break; sleep 0.1; done
cli MODULE LIST | grep -qx sluicegate \
    || { echo "test-redis-module: redis-server did not load the module:" >&2; cat "$work/redis.log" >&2; exit 1; }
echo "ok: redis-server $(redis-server --version | grep -o 'v=[0-9.]*') loaded it (MODULE LIST)"

cat > "$work/config.yaml" <<'YAML'
domain: example
descriptors:
  - key: path
    rate_limit: {quota: "5/minute", algorithm: gcra}
YAML
"$server" --config "$work/config.yaml" --http "127.0.0.1:$http" --grpc "127.0.0.1:$grpc" \
    --redis "redis://127.0.0.1:$redis_port/" --redis-module >"$work/server.log" 2>&1 &
pids+=($!)
python3 "$checks/json-check.py" "$http" test-redis-module
stats=$(cli INFO commandstats)
decides=$(echo "$stats" | grep -o 'cmdstat_sluicegate.decide:calls=[0-9]*' | cut -d= -f2 || true)
[ "${decides:-0}" -ge 1 ] || { echo "test-redis-module: no SLUICEGATE.DECIDE call: $stats" >&2; exit 1; }
if echo "$stats" | grep -q '^cmdstat_eval'; then
    echo "test-redis-module: a script ran: $stats" >&2; exit 1
fi
echo "ok: $decides SLUICEGATE.DECIDE calls, no script (INFO commandstats)"
SH
echo "test-redis-module: passed"
