#!/usr/bin/env bash
# The HTTP overhead benchmark (BENCHMARKS.md, "HTTP layer"): hello-world axum under wrk, no
# limiter vs sluicegate's layer vs tower_governor, alternated; medians as a Markdown table.
#   bash scripts/http_bench.sh [--rounds N] [--duration SECONDS] [--connections N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release --features http,tokio --example http_bench
exec "$CARGO_TARGET_DIR/release/examples/http_bench" "$@"
