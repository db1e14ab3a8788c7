#!/usr/bin/env bash
# Builds the Python package into OUT (default dist/): the abi3 wheel for CPython >= 3.9 on
# Linux x86-64, tagged manylinux2014 (glibc 2.17, so pip on RHEL 7/8, Debian 10+ or
# Ubuntu 18.04+ takes it), and the sdist. The wheel is linked by zig (PyPI's ziglang) against
# glibc 2.17's symbols; maturin checks that the module needs nothing newer before it tags it.
# maturin and ziglang live in a virtualenv under target/ (zig-venv.sh), and cargo builds into the
# workspace's target/ (under x86_64-unknown-linux-gnu/, as zig's builds name their target).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "${1:-dist}")
venv=$(bash scripts/dist/zig-venv.sh)
export PATH="$venv/bin:$PATH"
mkdir -p "$out"
# zig links through scripts/dist/zig-cc.sh, the node module's linker too: cargo puts the
# linker in every crate's fingerprint, so one linker lets the two builds share what they
# have in common (maturin --zig would name a linker of its own). maturin then checks the
# module's symbols against manylinux2014 before it tags the wheel.
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$PWD/scripts/dist/zig-cc.sh" \
    maturin build --release --target x86_64-unknown-linux-gnu --compatibility manylinux2014 \
    -m bindings/python/Cargo.toml --out "$out"
maturin sdist -m bindings/python/Cargo.toml --out "$out"
