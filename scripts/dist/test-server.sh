#!/usr/bin/env bash
# sluicegate-server as dist/ ships it, run where cargo is not on PATH: prints its version, and,
# started on 127.0.0.1 with a config of 5 a minute, answers POST /json five times OK and then
# OVER_LIMIT (scripts/dist/json-check.py); stopped by SIGTERM, it exits 0. A static (musl)
# build must need no libc at all: no interpreter, no shared library (readelf).
# Usage: test-server.sh [BINARY...]   (default: dist/'s binary for this machine: x86_64 or
# aarch64, glibc; arm64 ones run under qemu, scripts/dist/qemu.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
binaries=("$@")
[ "${#binaries[@]}" -gt 0 ] || binaries=("dist/sluicegate-server-$version-$(uname -m)-linux-gnu")

for binary in "${binaries[@]}"; do
    binary=$(realpath "$binary")
    [ -x "$binary" ] || { echo "test-server: $binary is missing: run scripts/dist.sh first" >&2; exit 1; }
    what=$(basename "$binary")
    case "$what" in
        *-linux-musl)
            if readelf -lW "$binary" | grep -q 'Requesting program interpreter' \
                    || readelf -dW "$binary" | grep -q '(NEEDED)'; then
                echo "test-server: $what is not static:" >&2; readelf -dW "$binary" >&2; exit 1
            fi
            echo "ok: $what is static: no interpreter, no NEEDED library ($(file -b "$binary" | cut -d, -f1-2))" ;;
    esac
    work=$(mktemp -d /tmp/sluicegate-dist-server.XXXXXX)
    cat > "$work/config.yaml" <<'YAML'
domain: example
descriptors:
  - key: path
    rate_limit: {quota: "5/minute", algorithm: gcra}
YAML
    bash scripts/dist/without-rust.sh "$work/home" bash -s "$binary" "$work" "$PWD/scripts/dist" <<'SH'
set -euo pipefail
binary=$1 work=$2 checks=$3
out=$("$binary" --version)
[ "$out" = "sluicegate-server $(basename "$binary" | cut -d- -f3)" ] \
    || { echo "test-server: --version printed '$out'" >&2; exit 1; }
echo "ok: $out"
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
http=$(port) grpc=$(port)
"$binary" --config "$work/config.yaml" --http "127.0.0.1:$http" --grpc "127.0.0.1:$grpc" \
    >"$work/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
python3 "$checks/json-check.py" "$http" test-server || { cat "$work/server.log" >&2; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
trap - EXIT
[ "$status" -eq 0 ] || { echo "test-server: exit status $status after SIGTERM" >&2; cat "$work/server.log" >&2; exit 1; }
echo "ok: exited 0 after SIGTERM"
SH
    rm -rf "$work"
    echo "test-server: $what passed"
done
