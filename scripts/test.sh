#!/usr/bin/env bash
# The whole test suite: unit, property, integration and doc tests (release, so the property
# tests run their full case counts quickly), then the loom model checks.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release

# The models need `--cfg loom` for every crate, so they build in their own target directory
# (otherwise each switch would rebuild everything). Two preemptions keep the run in minutes.
LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
RUSTFLAGS="--cfg loom" \
CARGO_TARGET_DIR=target/loom \
    cargo test -p loom-tests --release
