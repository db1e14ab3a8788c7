#!/usr/bin/env bash
# Builds the sluicegate Redis module into OUT (default dist/):
#   sluicegate-redis-module-VERSION-x86_64-linux-gnu.so    `redis-server --loadmodule` it
#   sluicegate-redis-module-VERSION-aarch64-linux-gnu.so   the same for arm64
# Usage: redis-module.sh [OUT] [TRIPLE...]   (default x86_64-unknown-linux-gnu; targets.sh)
# Linked by zig against glibc 2.17's symbols (scripts/dist/zig-cc.sh), as the wheel and the
# node module are, so that it loads into a Redis on any Linux with glibc 2.17 or later.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/dist/targets.sh
out=$(realpath -m "${1:-dist}")
shift || true
triples=("$@")
[ "${#triples[@]}" -gt 0 ] || triples=(x86_64-unknown-linux-gnu)
version=$(bash scripts/check-version.sh)
bash scripts/dist/zig-venv.sh >/dev/null
mkdir -p "$out"
for triple in "${triples[@]}"; do
    target_info "$triple"
    with_linker "$triple" cargo build --locked --release -p sluicegate-redis-module --target "$triple"
    install -m 0755 "${CARGO_TARGET_DIR:-target}/$triple/release/libsluicegate_redis.so" \
        "$out/sluicegate-redis-module-$version-$short.so"
    echo "dist/redis-module: sluicegate-redis-module-$version-$short.so"
done
