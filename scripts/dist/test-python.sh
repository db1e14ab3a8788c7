#!/usr/bin/env bash
# The wheel without Rust, on the machine it runs on (x86-64 or arm64, glibc or musl: the wheel
# of dist/ whose tags fit it; scripts/dist/test-arm64.sh runs this inside an arm64 Debian):
# checks its tags (abi3 for CPython >= 3.9, manylinux2014 or musllinux_1_2); then, where
# `command -v cargo` fails (scripts/dist/without-rust.sh), the machine's python3 makes a fresh
# virtualenv, pip installs the wheel from dist/ with no index (nothing else is needed), and
# runs bindings/python/README.md's first example (its answer checked), one middleware request
# (scripts/dist/wsgi-check.py), and, with pytest from PyPI, the replay of the Rust engine's
# answers on fixed traces (bindings/python/tests/test_traces.py: the same decisions, exactly).
# Which glibc symbols the module needs, scripts/dist/check-binaries.sh checks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
machine=$(uname -m)
# pip's tags: CPython >= 3.9's stable ABI; glibc 2.17 under both of manylinux's spellings, or musl.
if ldd --version 2>&1 | grep -qi musl; then
    tags=("musllinux_1_2_$machine")
else
    tags=("manylinux2014_$machine" "manylinux_2_17_$machine")
fi
wheels=("$PWD/dist/sluicegate-$version-cp39-abi3-"*"${tags[0]}"*.whl)
[ -f "${wheels[0]}" ] || { echo "test-python: no sluicegate-$version wheel for ${tags[0]} in dist/: run scripts/dist.sh first" >&2; exit 1; }
[ "${#wheels[@]}" -eq 1 ] || { echo "test-python: several wheels for ${tags[0]} in dist/: ${wheels[*]}" >&2; exit 1; }
wheel=${wheels[0]}
for tag in "${tags[@]}"; do
    [[ "$(basename "$wheel")" == *"$tag"* ]] || { echo "test-python: $(basename "$wheel") lacks the $tag tag" >&2; exit 1; }
done
echo "ok: $(basename "$wheel") (this machine: $machine)"
[ -f "dist/sluicegate-$version.tar.gz" ] || { echo "test-python: the sdist is missing" >&2; exit 1; }

work=$(mktemp -d /tmp/sluicegate-dist-python.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The first python block of the README's "## A first example" section.
awk '/^## A first example/ { s = 1 } s && /^```python$/ { c = 1; next } c && /^```$/ { exit } c' \
    bindings/python/README.md > "$work/first_example.py"
grep -q '^from sluicegate import' "$work/first_example.py" \
    || { echo "test-python: no first example in bindings/python/README.md" >&2; exit 1; }
cp scripts/dist/wsgi-check.py "$work/"

bash scripts/dist/without-rust.sh "$work/home" bash -c '
    set -euo pipefail
    cd "$1"
    python3 -m venv venv
    venv/bin/pip install --quiet --disable-pip-version-check --no-index "$2"
    installed=$(venv/bin/python -c "import importlib.metadata as m; print(m.version(\"sluicegate\"))")
    [ "$installed" = "$3" ] || { echo "test-python: installed version $installed, expected $3" >&2; exit 1; }
    echo "ok: pip installed sluicegate $installed from the wheel, with no index"
    output=$(venv/bin/python first_example.py)
    echo "first example: $output"
    [ "$output" = "go ahead; 99 more allowed now" ] \
        || { echo "test-python: the first example printed something else" >&2; exit 1; }
    venv/bin/python wsgi-check.py
    venv/bin/pip install --quiet --disable-pip-version-check pytest
    venv/bin/python -m pytest -q -p no:cacheprovider "$4/bindings/python/tests/test_traces.py"
' test-python "$work" "$wheel" "$version" "$PWD"
echo "test-python: passed"
