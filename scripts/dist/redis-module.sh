#!/usr/bin/env bash
# Builds the sluicegate Redis module into OUT (default dist/):
#   sluicegate-redis-module-VERSION-x86_64-linux-gnu.so   `redis-server --loadmodule` it
# Linked by zig against glibc 2.17's symbols (scripts/dist/zig-cc.sh), as the wheel and the
# node module are, so that it loads into a Redis on any x86-64 Linux with glibc 2.17 or later.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "${1:-dist}")
version=$(bash scripts/check-version.sh)
bash scripts/dist/zig-venv.sh >/dev/null
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$PWD/scripts/dist/zig-cc.sh" \
    cargo build --locked --release -p sluicegate-redis-module --target x86_64-unknown-linux-gnu
mkdir -p "$out"
install -m 0755 "${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/libsluicegate_redis.so" \
    "$out/sluicegate-redis-module-$version-x86_64-linux-gnu.so"
echo "dist/redis-module: sluicegate-redis-module-$version-x86_64-linux-gnu.so"
