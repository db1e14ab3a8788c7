#!/usr/bin/env bash
# Tests what scripts/dist.sh wrote to dist/, each artifact installed as a user without Rust
# would: the wheel (test-python.sh), the npm tarballs (test-node.sh), the image under podman
# (test-image.sh), the Kubernetes manifests and the Envoy snippet (test-kubernetes.sh), the
# Redis module under Debian's redis-server with the service (test-redis-module.sh).
# Runs all five and fails when any failed; none passes by skipping.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
start=$SECONDS
failed=()
for test in python node image kubernetes redis-module; do
    echo "== dist test: $test ($((SECONDS - start)) s)"
    bash "scripts/dist/test-$test.sh" || failed+=("$test")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "== dist tests failed: ${failed[*]} ($((SECONDS - start)) s)" >&2
    exit 1
fi
echo "== dist tests passed ($((SECONDS - start)) s)"
