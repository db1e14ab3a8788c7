#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ (cargo-fuzz, libFuzzer, on the nightly toolchain) for
# SECONDS seconds each (default 600), from its seeds (fuzz/seeds/<target>, written from the
# tests by fuzz/seeds/make.py) and the corpus earlier runs grew (fuzz/corpus/<target>).
# Exits non-zero at the first crash, leaving the input in fuzz/artifacts/<target>/.
#   scripts/fuzz.sh                  # every target, 10 minutes each
#   scripts/fuzz.sh 30               # CI: 30 s each
#   scripts/fuzz.sh 600 module_call  # one target
# Installs cargo-fuzz (crates.io) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzzing needs the nightly toolchain: rustup toolchain install nightly" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    # A debug build of the tool: it only drives cargo, and builds in a third of the time.
    cargo install cargo-fuzz --locked --debug
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
# -s none: the targets are safe Rust, so AddressSanitizer would only halve the executions;
# debug assertions (overflow checks) stay on.
build=(--sanitizer none --release --debug-assertions)
cargo +nightly fuzz build --fuzz-dir fuzz "${build[@]}"
mkdir -p target/fuzz-logs
for target in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$target"
    log="target/fuzz-logs/$target.log"
    echo "== $target: ${seconds} s"
    if ! cargo +nightly fuzz run --fuzz-dir fuzz "${build[@]}" "$target" \
        "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz target $target failed: the input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$log" || true
done
