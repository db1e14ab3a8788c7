#!/usr/bin/env bash
# Builds the Python package into OUT (default dist/): the abi3 wheel for CPython >= 3.9 on
# Linux x86-64, tagged manylinux2014 (glibc 2.17, so pip on RHEL 7/8, Debian 10+ or
# Ubuntu 18.04+ takes it), and the sdist. The wheel is linked by zig (PyPI's ziglang) against
# glibc 2.17's symbols; maturin checks that the module needs nothing newer before it tags it.
# maturin and ziglang live in a virtualenv under target/, and cargo builds into the
# workspace's target/ (under x86_64-unknown-linux-gnu/, as zig's builds name their target).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "${1:-dist}")
venv="$PWD/target/dist-venv"

if [ ! -x "$venv/bin/maturin" ] || ! "$venv/bin/python" -c "import ziglang" 2>/dev/null; then
    # Debian's python3 lacks ensurepip (so `venv`) until python3-venv is installed.
    python3 -m venv "$venv" 2>/dev/null || {
        rm -rf "$venv"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$venv"
    }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9.4,<2" "ziglang>=0.13,<0.14"
fi
# maturin finds zig as `python3 -m ziglang`: the virtualenv's python3 first on PATH.
export PATH="$venv/bin:$PATH"
mkdir -p "$out"
maturin build --release --zig --compatibility manylinux2014 \
    -m bindings/python/Cargo.toml --out "$out"
maturin sdist -m bindings/python/Cargo.toml --out "$out"
