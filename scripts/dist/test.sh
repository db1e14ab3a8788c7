#!/usr/bin/env bash
# Tests what scripts/dist.sh wrote to dist/, each artifact installed as a user without Rust
# would: first every native file's format, entry point and libraries (check-binaries.py);
# then on this x86-64 machine the wheel (test-python.sh), the npm tarballs (test-node.sh),
# the servers that run here (test-server.sh: glibc, and the static musl ones, arm64's under
# qemu), the image under podman (test-image.sh), the Kubernetes manifests and the Envoy
# snippet (test-kubernetes.sh), the Redis module under Debian's redis-server with the service
# (test-redis-module.sh); and, when dist/ holds arm64 artifacts, those in an arm64 Debian
# under qemu (test-arm64.sh). Artifacts for macOS and Windows are checked, not run.
# Runs them all and fails when any failed; none passes by skipping.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
start=$SECONDS
version=$(bash scripts/check-version.sh)
failed=()
run() {
    local name=$1; shift
    echo "== dist test: $name ($((SECONDS - start)) s)"
    "$@" || failed+=("$name")
}
run binaries python3 scripts/dist/check-binaries.py dist
run python bash scripts/dist/test-python.sh
run node bash scripts/dist/test-node.sh
servers=(dist/sluicegate-server-"$version"-x86_64-linux-gnu)
for static in dist/sluicegate-server-"$version"-{x86_64,aarch64}-linux-musl; do
    [ ! -f "$static" ] || servers+=("$static")
done
if [[ " ${servers[*]} " == *aarch64* ]]; then bash scripts/dist/qemu.sh; fi
run server bash scripts/dist/test-server.sh "${servers[@]}"
run image bash scripts/dist/test-image.sh
run kubernetes bash scripts/dist/test-kubernetes.sh
run redis-module bash scripts/dist/test-redis-module.sh
if compgen -G "dist/*aarch64-linux-gnu*" >/dev/null || compgen -G "dist/*manylinux2014_aarch64*" >/dev/null \
        || compgen -G "dist/*linux-arm64-gnu*" >/dev/null; then
    run arm64 bash scripts/dist/test-arm64.sh
fi
if [ "${#failed[@]}" -gt 0 ]; then
    echo "== dist tests failed: ${failed[*]} ($((SECONDS - start)) s)" >&2
    exit 1
fi
echo "== dist tests passed ($((SECONDS - start)) s)"
