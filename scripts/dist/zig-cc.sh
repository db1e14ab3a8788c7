#!/bin/sh
# cargo's linker for what scripts/dist/ builds with zig: zig's cc (PyPI's ziglang in
# target/dist-venv, scripts/dist/zig-venv.sh), through the cargo-zigbuild logic maturin carries
# (`maturin zig cc`), as maturin links a wheel. ZIG_TARGET is zig's target, default
# x86_64-linux-gnu.2.17 (glibc 2.17's symbols: manylinux2014); scripts/dist/targets.sh names
# the one for each Rust target.
venv="$(cd "$(dirname "$0")/../.." && pwd)/target/dist-venv"
export CARGO_ZIGBUILD_ZIG_COMMAND="$venv/bin/python3"
export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'
exec "$venv/bin/maturin" zig cc -- -g -fno-sanitize=all -target "${ZIG_TARGET:-x86_64-linux-gnu.2.17}" "$@"
