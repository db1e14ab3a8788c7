#!/usr/bin/env bash
# Makes target/dist-venv, the virtualenv holding maturin and zig (PyPI's ziglang) that link
# the wheel and the node module against glibc 2.17's symbols (scripts/dist/zig-cc.sh), when
# it lacks either. Prints its path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
venv="$PWD/target/dist-venv"
if [ ! -x "$venv/bin/maturin" ] || ! "$venv/bin/python" -c "import ziglang" 2>/dev/null; then
    # Debian's python3 lacks ensurepip (so `venv`) until python3-venv is installed.
    python3 -m venv "$venv" >&2 2>/dev/null || {
        rm -rf "$venv"
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$venv" >&2
    }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9.4,<2" "ziglang>=0.13,<0.14" >&2
fi
echo "$venv"
