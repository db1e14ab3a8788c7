#!/usr/bin/env bash
# Builds sluicegate-server's image from deploy/Containerfile (FROM scratch) into OUT:
#   sluicegate-server-VERSION.oci.tar   for amd64 alone, or, given an arm64 binary too, an OCI
#                                       index of amd64 and arm64 (podman picks the machine's);
#                                       `podman load -i` (or skopeo) reads it; also left in
#                                       podman's store as localhost/sluicegate-server:VERSION
# Usage: image.sh OUT AMD64_BINARY [ARM64_BINARY]   (the `service` builds of server.sh)
# Each architecture's build context is target/dist/image/ARCH/ (scripts/dist/image-rootfs.sh).
# No RUN step: nothing is emulated, so the arm64 image builds on any machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "$1")
declare -A binaries=([amd64]=$2)
[ -z "${3:-}" ] || binaries[arm64]=$3
version=$(bash scripts/check-version.sh)
image="localhost/sluicegate-server:$version"

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
mkdir -p "$out"
archive="$out/sluicegate-server-$version.oci.tar"
rm -f "$archive"
podman manifest rm "$image" >/dev/null 2>&1 || true
podman rmi --force "$image" >/dev/null 2>&1 || true
labels=(--label "org.opencontainers.image.version=$version" --label "org.opencontainers.image.title=sluicegate-server")
if [ -z "${binaries[arm64]:-}" ]; then
    bash scripts/dist/image-rootfs.sh "${binaries[amd64]}" target/dist/image/amd64 amd64
    podman build --quiet --format oci --file deploy/Containerfile "${labels[@]}" \
        --tag "$image" target/dist/image/amd64
    podman save --quiet --format oci-archive --output "$archive" "$image"
    echo "dist/server: $image, $(podman image inspect --format '{{.Size}}' "$image") bytes unpacked"
    exit 0
fi
# One image per architecture, gathered in one OCI index that names both; the archive keeps
# the name.
podman manifest create "$image" >/dev/null
for arch in amd64 arm64; do
    bash scripts/dist/image-rootfs.sh "${binaries[$arch]}" "target/dist/image/$arch" "$arch"
    podman build --quiet --format oci --platform "linux/$arch" --manifest "$image" \
        --file deploy/Containerfile "${labels[@]}" "target/dist/image/$arch" >/dev/null
done
podman manifest push --quiet --all "$image" "oci-archive:$archive:$image"
echo "dist/server: $image, an index of $(podman manifest inspect "$image" | grep -c '"architecture"') images (amd64, arm64)"
