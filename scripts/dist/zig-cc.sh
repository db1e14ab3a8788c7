#!/bin/sh
# cargo's linker for the node module in scripts/dist/npm.sh: zig's cc (PyPI's ziglang in
# target/dist-venv, scripts/dist/zig-venv.sh) targeting glibc 2.17, through the
# cargo-zigbuild logic maturin carries (`maturin zig cc`), as maturin links the wheel.
venv="$(cd "$(dirname "$0")/../.." && pwd)/target/dist-venv"
export CARGO_ZIGBUILD_ZIG_COMMAND="$venv/bin/python3"
export CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'
exec "$venv/bin/maturin" zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.2.17 "$@"
