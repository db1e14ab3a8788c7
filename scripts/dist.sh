#!/usr/bin/env bash
# Builds everything that installs without Rust into dist/ (emptied first):
#   sluicegate-VERSION-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl, sluicegate-VERSION.tar.gz
#                                    the Python package: the abi3 wheel and the sdist
#   sluicegate-VERSION.tgz, sluicegate-linux-x64-gnu-VERSION.tgz
#                                    the npm packages (napi-rs's layout)
#   sluicegate-server-VERSION-x86_64-linux-gnu, sluicegate-server-VERSION.oci.tar
#                                    the service (`service` profile) and its image
#   sluicegate-redis-module-VERSION-x86_64-linux-gnu.so
#                                    the Redis module (`redis-server --loadmodule`)
#   SHA256SUMS
# Usage: scripts/dist.sh [python] [npm] [server] [redis-module]   (default: all four)
# Needs cargo, node and npm, python3, and podman for the image (.ci/run installs them from
# Debian). scripts/dist/test.sh then installs each artifact where cargo is not on PATH.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
step() { echo "== dist: $1 ($((SECONDS - start)) s)"; }

version=$(bash scripts/check-version.sh)
parts=("$@")
[ "${#parts[@]}" -gt 0 ] || parts=(python npm server redis-module)
if [ "$#" -eq 0 ]; then rm -rf dist; fi
mkdir -p dist

for part in "${parts[@]}"; do
    case "$part" in
        python|npm|server|redis-module) step "$part ($version)"; bash "scripts/dist/$part.sh" dist ;;
        *) echo "dist: unknown part '$part' (python, npm, server, redis-module)" >&2; exit 2 ;;
    esac
done

(cd dist && rm -f SHA256SUMS && sha256sum -- * > SHA256SUMS)
step "done"
ls -l dist
