#!/usr/bin/env bash
# The arm64 (aarch64, glibc) artifacts of dist/, installed and run as on an arm64 machine:
# inside an arm64 Debian 13 whose every program runs under qemu (scripts/dist/in-arm64.sh,
# the checkout at /work), the same tests as on x86-64: the wheel (test-python.sh), the npm
# packages (test-node.sh), sluicegate-server (test-server.sh), the Redis module under the
# userland's own redis-server (test-redis-module.sh); each for what dist/ holds. Then pip's
# refusal of a wheel built for the other architecture, both ways, its message shown.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
tests=()
compgen -G "dist/sluicegate-$version-cp39-abi3-*manylinux2014_aarch64*.whl" >/dev/null && tests+=(python)
[ -f "dist/sluicegate-linux-arm64-gnu-$version.tgz" ] && tests+=(node)
[ -f "dist/sluicegate-server-$version-aarch64-linux-gnu" ] && tests+=(server)
[ -f "dist/sluicegate-redis-module-$version-aarch64-linux-gnu.so" ] && tests+=(redis-module)
[ "${#tests[@]}" -gt 0 ] || { echo "test-arm64: no aarch64 artifact in dist/: run scripts/dist.sh --target aarch64-unknown-linux-gnu" >&2; exit 1; }

start=$SECONDS
bash scripts/dist/in-arm64.sh "$PWD" '
    set -euo pipefail
    cd /work
    echo "test-arm64: in $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m), python $(python3 -c "import platform; print(platform.python_version())"), node $(node --version)"
    for test in "$@"; do
        echo "== test-arm64: $test"
        bash "scripts/dist/test-$test.sh"
    done
' "${tests[@]}"
echo "test-arm64: ${tests[*]} passed under qemu ($((SECONDS - start)) s)"

# A wheel for the other architecture: pip refuses it, naming its platform tag.
refused() {
    local output
    if output=$("$@" 2>&1); then echo "test-arm64: pip installed a wheel for another machine" >&2; return 1; fi
    echo "$output" | grep -m1 "is not a supported wheel on this platform" \
        || { echo "test-arm64: pip failed otherwise: $output" >&2; return 1; }
}
if [[ " ${tests[*]} " == *" python "* ]]; then
    work=$(mktemp -d /tmp/sluicegate-dist-arm64.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    python3 -m venv "$work/venv"
    refused "$work/venv/bin/pip" install --no-index --disable-pip-version-check dist/sluicegate-"$version"-cp39-abi3-*manylinux2014_aarch64*.whl
    x86=(dist/sluicegate-"$version"-cp39-abi3-*manylinux2014_x86_64*.whl)
    [ -f "${x86[0]}" ] || { echo "test-arm64: no x86_64 wheel in dist/ to offer the arm64 pip" >&2; exit 1; }
    bash scripts/dist/in-arm64.sh "$PWD" "$(declare -f refused); "'venv=$(mktemp -d)/venv && python3 -m venv "$venv" && refused "$venv/bin/pip" install --no-index --disable-pip-version-check "/work/$1"' "${x86[0]}"
    echo "ok: pip on each architecture refuses the other's wheel, naming its platform"
fi
