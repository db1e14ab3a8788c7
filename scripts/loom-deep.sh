#!/usr/bin/env bash
# The loom models at a deeper preemption bound than CI's 2 (outside CI: it takes far longer).
# Every model runs: the core's, the Redis layer's batch lanes and deny cache, CoarseClock's
# reading (loom-tests with no feature), and the telemetry models (feature `telemetry`).
#
#   bash scripts/loom-deep.sh            # LOOM_MAX_PREEMPTIONS=3
#   LOOM_MAX_PREEMPTIONS=4 bash scripts/loom-deep.sh
#   bash scripts/loom-deep.sh --test redis_lanes   # one model file (any `cargo test` argument)
set -euo pipefail
cd "$(dirname "$0")/.."

export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR=target/loom
echo "== loom models at LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS"
start=$SECONDS
cargo test -p loom-tests --release "$@"
if [ $# -eq 0 ]; then
    cargo test -p loom-tests --release --features telemetry --test telemetry
fi
echo "== done in $((SECONDS - start)) s"
