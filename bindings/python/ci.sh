#!/usr/bin/env bash
# The Python package's CI, run from the repository root by .ci/run after the Rust tests:
# installs what is missing (python3 and its venv module, redis-server), makes a virtualenv
# under target/ (git-ignored), installs maturin, pytest and the test dependencies from PyPI,
# builds and installs the package from source with `pip install ./bindings/python` (cargo
# builds into the workspace's target/, sharing what the Rust build left there), and runs
# `pytest bindings/python` (the middleware tests start target/release/examples/http_server:
# build it first, as scripts/test.sh does). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
start=$SECONDS
step() { echo "== python: $1 ($((SECONDS - start)) s)"; }

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_updated=""
apt_install() {
    if [ -z "$apt_updated" ]; then
        $sudo apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

venv="$PWD/target/python-venv"
step "python3, its venv module, redis-server, redis-sentinel and openssl"
command -v python3 >/dev/null 2>&1 || apt_install python3
command -v redis-server >/dev/null 2>&1 || apt_install redis-server
# The TLS and Sentinel tests make certificates with openssl and start redis-sentinel.
command -v redis-sentinel >/dev/null 2>&1 || apt_install redis-sentinel
command -v openssl >/dev/null 2>&1 || apt_install openssl
if [ ! -x "$venv/bin/python" ]; then
    mkdir -p target
    # Debian's python3 lacks ensurepip (so `venv`) until python3-venv is installed.
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        apt_install python3-venv
        python3 -m venv "$venv"
    fi
fi
python="$venv/bin/python"
# maturin's build hook runs the `maturin` binary it finds on PATH: the virtualenv's.
export PATH="$venv/bin:$PATH"
"$python" --version

step "maturin, pytest, mypy and the middleware tests' servers, frameworks (Django and DRF too) and test client from PyPI"
# The same list as pyproject.toml's `test` extra. The middleware tests also start the Rust
# example server, target/release/examples/http_server, which `cargo test --workspace
# --release --all-features` (scripts/test.sh, before this script) builds.
"$python" -m pip install --quiet --disable-pip-version-check --upgrade \
    "maturin>=1.9.4,<2" "pytest>=7" "mypy>=1.10" \
    "uvicorn>=0.30" "starlette>=0.37" "fastapi>=0.110" "flask>=3" "gunicorn>=22" \
    "websockets>=13" "httpx>=0.27" "django>=4.2" "djangorestframework>=3.14"

step "pip install ./bindings/python (cargo, into target/)"
# No build isolation: the build uses the maturin just installed. CARGO_TARGET_DIR is left
# alone, so cargo builds into the workspace's target/ like every other crate of it.
"$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
    --force-reinstall --no-deps ./bindings/python

step "pytest bindings/python"
"$python" -m pytest bindings/python -q

step "done"
