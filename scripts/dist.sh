#!/usr/bin/env bash
# Builds everything that installs without Rust into dist/ (emptied first when no part is named).
# For Linux x86-64 with glibc by default; `--all` adds every platform users install on, and
# `--target TRIPLE` (repeatable) names some (scripts/dist/targets.sh lists them):
#   sluicegate-VERSION-cp39-abi3-PLATFORM.whl, sluicegate-VERSION.tar.gz
#                                    the Python package: an abi3 wheel per platform
#                                    (manylinux2014 x86_64/aarch64, musllinux_1_2 x86_64/aarch64,
#                                    macosx x86_64/arm64, win_amd64) and the sdist
#   sluicegate-VERSION.tgz, sluicegate-PLATFORM-VERSION.tgz
#                                    the npm packages (napi-rs's layout): the JavaScript, and a
#                                    native module per platform (linux-x64-gnu, linux-arm64-gnu,
#                                    linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64,
#                                    win32-x64-gnu)
#   sluicegate-server-VERSION-ARCH-linux-LIBC, sluicegate-server-VERSION.oci.tar
#                                    the service (`service` profile; x86_64/aarch64, gnu and
#                                    static musl) and its image (an amd64 + arm64 index once
#                                    aarch64-unknown-linux-gnu is built)
#   sluicegate-redis-module-VERSION-ARCH-linux-gnu.so
#                                    the Redis module (`redis-server --loadmodule`), x86_64/aarch64
#   SHA256SUMS
# Usage: scripts/dist.sh [--all | --target TRIPLE]... [python] [npm] [server] [redis-module]
# Needs cargo, node and npm, python3, and podman for the image (.ci/run installs them from
# Debian); the other platforms' linkers are zig (PyPI's ziglang) and, for Windows, Debian's
# mingw-w64 (installed when missing). scripts/dist/test.sh then installs each artifact where
# cargo is not on PATH (arm64 ones in an arm64 Debian under qemu: scripts/dist/test-arm64.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
step() { echo "== dist: $1 ($((SECONDS - start)) s)"; }

source scripts/dist/targets.sh
version=$(bash scripts/check-version.sh)
parts=() targets=() all=no
while [ "$#" -gt 0 ]; do
    case "$1" in
        --all) all=yes ;;
        --target) targets+=("$2"); target_info "$2"; shift ;;
        python|npm|server|redis-module) parts+=("$1") ;;
        *) echo "dist: unknown argument '$1' (--all, --target TRIPLE, python, npm, server, redis-module)" >&2; exit 2 ;;
    esac
    shift
done
if [ "${#parts[@]}" -eq 0 ]; then
    parts=(python npm server redis-module)
    rm -rf dist
fi
[ "${#targets[@]}" -gt 0 ] || targets=(x86_64-unknown-linux-gnu)
mkdir -p dist

# The targets of TARGETS (or of --all) that PART is built for.
part_targets() {
    local part=$1 candidates=() triple
    case "$part" in
        python|npm) candidates=("${all_targets[@]}") ;;
        server) candidates=("${server_targets[@]}") ;;
        redis-module) candidates=("${module_targets[@]}") ;;
    esac
    for triple in "${candidates[@]}"; do
        if [ "$all" = yes ] || [[ " ${targets[*]} " == *" $triple "* ]]; then echo "$triple"; fi
    done
}

for part in "${parts[@]}"; do
    mapfile -t triples < <(part_targets "$part")
    [ "${#triples[@]}" -gt 0 ] || continue
    step "$part ($version: ${triples[*]})"
    if [[ " ${triples[*]} " == *" x86_64-pc-windows-gnu "* ]] && ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc-mingw-w64-x86-64 >/dev/null
    fi
    if [ "$all" = yes ] || [ "${targets[*]}" != x86_64-unknown-linux-gnu ]; then
        rustup target add "${triples[@]}" >/dev/null 2>&1 || true
    fi
    bash "scripts/dist/$part.sh" dist "${triples[@]}"
done

(cd dist && rm -f SHA256SUMS && sha256sum -- * > SHA256SUMS)
step "done"
ls -l dist
