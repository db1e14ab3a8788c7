#!/usr/bin/env bash
# Builds the Python package into OUT (default dist/): an abi3 wheel for CPython >= 3.9 per
# target, and the sdist. Usage: python.sh [OUT] [TRIPLE...] (default x86_64-unknown-linux-gnu;
# scripts/dist/targets.sh lists them). Linux glibc wheels are tagged manylinux2014 (glibc 2.17:
# pip on RHEL 7/8, Debian 10+, Ubuntu 18.04+, Amazon Linux 2 takes them) and musl ones
# musllinux_1_2 (Alpine 3.13+); maturin checks the module's symbols against the tag before it
# tags the wheel. macOS wheels are macosx_10_12_x86_64 and macosx_11_0_arm64, Windows win_amd64.
# Linked by zig (PyPI's ziglang) or Debian's mingw-w64 (targets.sh). maturin and ziglang live
# in a virtualenv under target/ (zig-venv.sh); cargo builds into target/TRIPLE/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/dist/targets.sh
out=$(realpath -m "${1:-dist}")
shift || true
triples=("$@")
[ "${#triples[@]}" -gt 0 ] || triples=(x86_64-unknown-linux-gnu)
venv=$(bash scripts/dist/zig-venv.sh)
export PATH="$venv/bin:$PATH"
mkdir -p "$out"
for triple in "${triples[@]}"; do
    target_info "$triple"
    echo "dist/python: $triple"
    # zig links through scripts/dist/zig-cc.sh, the node module's linker too: cargo puts the
    # linker in every crate's fingerprint, so one linker lets the two builds share what they
    # have in common (maturin --zig would name a linker of its own).
    compat=()
    [ -z "$wheel_compat" ] || compat=(--compatibility "$wheel_compat")
    with_linker "$triple" maturin build --release --target "$triple" "${compat[@]}" \
        -m bindings/python/Cargo.toml --out "$out"
done
maturin sdist -m bindings/python/Cargo.toml --out "$out"
