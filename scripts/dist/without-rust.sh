#!/usr/bin/env bash
# Runs COMMAND [ARGS...] the way a machine without Rust would: `env -i`, PATH=/usr/bin:/bin,
# HOME a fresh folder (no npm or pip cache, no ~/.cargo), and only the proxy and CA settings
# the registries need passed on. It fails, saying so, when cargo or rustc can be found there;
# otherwise it prints that `command -v cargo` fails and runs the command.
# Usage: without-rust.sh HOME_DIR COMMAND [ARGS...]
set -euo pipefail
home=$1; shift
mkdir -p "$home"
keep=()
for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY \
        NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR PIP_CERT PIP_INDEX_URL npm_config_registry; do
    if [ -n "${!name:-}" ]; then keep+=("$name=${!name}"); fi
done
exec env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 "${keep[@]}" bash -c '
    set -euo pipefail
    for tool in cargo rustc rustup; do
        if found=$(command -v "$tool"); then
            echo "without-rust: $tool is on PATH here ($found): the test must run where Rust is not installed" >&2
            exit 1
        fi
    done
    echo "without-rust: \`command -v cargo\` fails here (PATH=$PATH), and rustc and rustup are not found either"
    exec "$@"
' without-rust "$@"
