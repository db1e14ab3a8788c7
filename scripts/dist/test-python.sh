#!/usr/bin/env bash
# The wheel without Rust: checks its tags (abi3 for CPython >= 3.9, manylinux2014) and that its
# module needs no glibc symbol newer than 2.17; then, where `command -v cargo` fails
# (scripts/dist/without-rust.sh), Debian's python3 makes a fresh virtualenv, pip installs the
# wheel from dist/ with no index (nothing else is needed), and runs bindings/python/README.md's
# first example (its answer checked) and one middleware request (scripts/dist/wsgi-check.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
wheels=("$PWD/dist/sluicegate-$version-"*.whl)
[ -f "${wheels[0]}" ] || { echo "test-python: no sluicegate-$version wheel in dist/: run scripts/dist.sh first" >&2; exit 1; }
[ "${#wheels[@]}" -eq 1 ] || { echo "test-python: several wheels in dist/: ${wheels[*]}" >&2; exit 1; }
wheel=${wheels[0]}
# pip's tags: CPython >= 3.9's stable ABI; glibc 2.17 under both of manylinux's spellings.
case "$(basename "$wheel")" in
    *-cp39-abi3-*manylinux2014_x86_64*) ;;
    *) echo "test-python: $(basename "$wheel") is not tagged cp39-abi3 manylinux2014_x86_64" >&2; exit 1 ;;
esac
case "$(basename "$wheel")" in
    *manylinux_2_17_x86_64*) echo "ok: $(basename "$wheel")" ;;
    *) echo "test-python: $(basename "$wheel") lacks the manylinux_2_17_x86_64 tag" >&2; exit 1 ;;
esac
[ -f "dist/sluicegate-$version.tar.gz" ] || { echo "test-python: the sdist is missing" >&2; exit 1; }

work=$(mktemp -d /tmp/sluicegate-dist-python.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 -m zipfile -e "$wheel" "$work/wheel"
module=$(find "$work/wheel" -name '_native*.so')
newest=$(objdump -T "$module" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
echo "ok: $(basename "$module") needs glibc symbols up to $newest"
[ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] \
    || { echo "test-python: the module needs $newest, newer than manylinux2014's GLIBC_2.17" >&2; exit 1; }

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
' test-python "$work" "$wheel" "$version"
echo "test-python: passed"
