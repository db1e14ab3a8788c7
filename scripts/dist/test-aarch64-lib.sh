#!/usr/bin/env bash
# The library's unit tests (`cargo test --lib`, default features) built for aarch64 Linux and
# run under qemu (scripts/dist/qemu.sh): cargo's runner is qemu-aarch64-static with Debian's
# arm64 C runtime (/usr/aarch64-linux-gnu); linked by zig, as the arm64 packages are
# (scripts/dist/zig-cc.sh). Among them, TscClock's test that it reads the generic timer.
# Extra arguments go to the test binary (a filter, --nocapture).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/dist/targets.sh
bash scripts/dist/qemu.sh
bash scripts/dist/zig-venv.sh >/dev/null
rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 || true
# No rustc wrapper: the cc crate would put sccache in front of zig's cc, which sccache cannot
# identify (a test dependency compiles C).
export RUSTC_WRAPPER=""
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
with_linker aarch64-unknown-linux-gnu cargo test --locked --release --target aarch64-unknown-linux-gnu --lib -- "$@"
