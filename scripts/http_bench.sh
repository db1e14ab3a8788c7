#!/usr/bin/env bash
# The HTTP overhead benchmark (BENCHMARKS.md, "HTTP layer"): a hello-world axum server with no
# limiter, with sluicegate's layer and with tower_governor, first called in process (ns per
# request), then under wrk on loopback with the server pinned to one core and wrk to the other;
# variants alternated, medians printed as Markdown tables. Extra arguments go to the wrk part:
#   bash scripts/http_bench.sh [--rounds N] [--duration SECONDS] [--connections N] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release --features http,tokio --example http_bench
bench="$CARGO_TARGET_DIR/release/examples/http_bench"
"$bench" --in-process --rounds 5
echo
exec "$bench" --pin --server-threads 1 --rounds 5 --duration 4 "$@"
