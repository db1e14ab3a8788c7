#!/usr/bin/env bash
# What the all-features release run (scripts/test.sh) cannot see, in one dev-profile build
# (debug_assert!s and integer overflow checks on):
# - the core with no feature at all: its unit tests, its doc tests, and the property tests
#   against the reference models at reduced case counts;
# - `http` without `redis`, and `redis` without `http`: each built, its unit tests and a couple
#   of integration tests run (a focused subset, to keep CI short).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debug builds run the property tests about 20 times slower than release: a tenth of the cases.
export PROPTEST_CASES="${PROPTEST_CASES:-30}"
step() { echo "== test-features: $1 ($SECONDS s)"; }

step "no feature: unit tests and property tests, debug profile"
cargo test --no-default-features --lib --test properties_exact --test properties_bounded \
    --test keyed_properties --test edge_cases --test dynamic_equivalence
step "no feature: doc tests"
cargo test --no-default-features --doc
step "http without redis"
cargo test --no-default-features --features http --lib --test http_layer \
    --test client_ip_ipv6_chains
step "redis without http"
cargo test --no-default-features --features redis --lib --test redis_api --test redis_deny_cache
step "done"
