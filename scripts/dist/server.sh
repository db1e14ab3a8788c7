#!/usr/bin/env bash
# Builds sluicegate-server with the `service` profile (fat LTO, one codegen unit) and its OCI
# image from deploy/Containerfile, into OUT (default dist/):
#   sluicegate-server-VERSION-x86_64-linux-gnu    glibc, as Debian 12 builds it
#   sluicegate-server-VERSION-aarch64-linux-gnu   glibc 2.17 or later (linked by zig)
#   sluicegate-server-VERSION-x86_64-linux-musl   static: no libc needed (Alpine, scratch)
#   sluicegate-server-VERSION-aarch64-linux-musl  static
#   sluicegate-server-VERSION.oci.tar             the image, FROM scratch: for amd64 alone, or,
#                                                 when aarch64-unknown-linux-gnu is built too,
#                                                 an OCI index of amd64 and arm64; `podman load
#                                                 -i` (or skopeo) reads it, and it is also left
#                                                 in podman's store as
#                                                 localhost/sluicegate-server:VERSION
# Usage: server.sh [OUT] [TRIPLE...]   (default x86_64-unknown-linux-gnu; targets.sh)
# The image is scripts/dist/image.sh's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/dist/targets.sh
out=$(realpath -m "${1:-dist}")
shift || true
triples=("$@")
[ "${#triples[@]}" -gt 0 ] || triples=(x86_64-unknown-linux-gnu)
version=$(bash scripts/check-version.sh)
image="localhost/sluicegate-server:$version"
target_dir="${CARGO_TARGET_DIR:-target}"
mkdir -p "$out"

# The binary for TRIPLE, built.
build() {
    local triple=$1
    if [ "$triple" = x86_64-unknown-linux-gnu ]; then
        # The host's own toolchain and glibc, as the image has always been built.
        cargo build --locked --profile service -p sluicegate-server >&2
        echo "$target_dir/service/sluicegate-server"
    else
        bash scripts/dist/zig-venv.sh >/dev/null
        # musl targets link statically (Rust's default for them: crt-static).
        with_linker "$triple" cargo build --locked --profile service -p sluicegate-server --target "$triple" >&2
        echo "$target_dir/$triple/service/sluicegate-server"
    fi
}

declare -A image_binaries=()
for triple in "${triples[@]}"; do
    target_info "$triple"
    echo "dist/server: $triple"
    binary=$(build "$triple")
    install -m 0755 "$binary" "$out/sluicegate-server-$version-$short"
    case "$triple" in
        x86_64-unknown-linux-gnu) image_binaries[amd64]=$binary ;;
        aarch64-unknown-linux-gnu) image_binaries[arm64]=$binary ;;
    esac
done
[ -n "${image_binaries[amd64]:-}" ] || exit 0

bash scripts/dist/image.sh "$out" "${image_binaries[amd64]}" ${image_binaries[arm64]:+"${image_binaries[arm64]}"}
