#!/usr/bin/env bash
# Builds sluicegate-server with the `service` profile (fat LTO, one codegen unit) and its OCI
# image from deploy/Containerfile, into OUT (default dist/):
#   sluicegate-server-VERSION-x86_64-linux-gnu   the binary (glibc, as Debian 12 builds it)
#   sluicegate-server-VERSION.oci.tar            the image, `podman load -i` (or skopeo) reads it;
#                                                also left in podman's store as
#                                                localhost/sluicegate-server:VERSION
# The image's build context is target/dist/image/ (scripts/dist/image-rootfs.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "${1:-dist}")
version=$(bash scripts/check-version.sh)
image="localhost/sluicegate-server:$version"
context="$PWD/target/dist/image"

binary="${CARGO_TARGET_DIR:-target}/service/sluicegate-server"

cargo build --locked --profile service -p sluicegate-server
mkdir -p "$out"
install -m 0755 "$binary" "$out/sluicegate-server-$version-x86_64-linux-gnu"

# Debian's podman, with runc (the runtime these machines run containers with) and iptables
# (its published ports), installed when missing.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 \
        || ! command -v iptables >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        podman runc iptables netavark aardvark-dns >/dev/null
fi
bash scripts/dist/image-rootfs.sh "$binary" "$context"
podman build --quiet --format oci --file deploy/Containerfile \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.title=sluicegate-server" \
    --tag "$image" "$context"
rm -f "$out/sluicegate-server-$version.oci.tar"
podman save --quiet --format oci-archive --output "$out/sluicegate-server-$version.oci.tar" "$image"
echo "dist/server: $image, $(podman image inspect --format '{{.Size}}' "$image") bytes unpacked"
