#!/usr/bin/env bash
# Assembles the build context of deploy/Containerfile: CONTEXT/rootfs/ holds BINARY as
# /usr/local/bin/sluicegate-server, every shared library it loads (with its interpreter)
# copied from the files Debian's packages installed on this machine (dpkg names the owner of
# each; their copyright files come along), and /etc/passwd, /etc/group and
# /etc/nsswitch.conf for user 65532. glibc >= 2.34 resolves host names (a Redis service's)
# with no NSS module to load, so nothing else is needed.
# ARCH amd64 (default): the libraries as this machine's loader resolves them (ldd). arm64: from
# Debian's arm64 C runtime for cross builds (libc6-arm64-cross, libgcc-s1-arm64-cross: the
# arm64 packages' own files, under /usr/aarch64-linux-gnu), placed where arm64 Debian's loader
# looks (/lib/aarch64-linux-gnu, its interpreter at /lib/ld-linux-aarch64.so.1).
# Usage: image-rootfs.sh BINARY CONTEXT [ARCH]
set -euo pipefail
binary=$1 context=$2 arch=${3:-amd64}
rootfs="$context/rootfs"
rm -rf "$rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/etc/sluicegate" "$rootfs/usr/share/doc"
install -m 0755 "$binary" "$rootfs/usr/local/bin/sluicegate-server"

# Copies the library at PATH to DEST in the image (default: the same path), with the
# copyright file of the Debian package that installed it.
copy_owned() {
    local path=$1 dest=${2:-$1} real package
    real=$(readlink -f "$path")
    # dpkg records the pre-merged-/usr path (/lib/...): ask for it, then the resolved one.
    package=$( (dpkg-query -S "$path" || dpkg-query -S "$real") 2>/dev/null | head -1 | cut -d: -f1)
    [ -n "$package" ] || { echo "image-rootfs: no Debian package owns $path" >&2; exit 1; }
    mkdir -p "$rootfs$(dirname "$dest")"
    cp -L "$path" "$rootfs$dest"
    if [ -f "/usr/share/doc/$package/copyright" ]; then
        mkdir -p "$rootfs/usr/share/doc/$package"
        cp "/usr/share/doc/$package/copyright" "$rootfs/usr/share/doc/$package/"
    fi
    echo "image-rootfs: $dest (Debian package $package)"
}

case "$arch" in
    amd64)
        # Every library the binary loads, transitively, and its interpreter, as this machine's
        # loader resolves them (ldd: our own binary, so running its loader on it is safe).
        libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
        [ -n "$libraries" ] || { echo "image-rootfs: ldd lists no library for $binary" >&2; exit 1; }
        for path in $libraries; do
            copy_owned "$path"
        done
        ;;
    arm64)
        cross=/usr/aarch64-linux-gnu/lib
        interpreter=$(readelf -l "$binary" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
        [ "$interpreter" = /lib/ld-linux-aarch64.so.1 ] \
            || { echo "image-rootfs: $binary's interpreter is '$interpreter'" >&2; exit 1; }
        copy_owned "$cross/ld-linux-aarch64.so.1" "$interpreter"
        # The NEEDED entries, transitively (readelf: nothing arm64 runs here).
        needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
        queue=$(needed "$binary") seen=" "
        while [ -n "$queue" ]; do
            set -- $queue
            name=$1; shift; queue="$*"
            case "$seen" in *" $name "*) continue ;; esac
            seen="$seen$name "
            [ "$name" != ld-linux-aarch64.so.1 ] || continue
            [ -e "$cross/$name" ] || { echo "image-rootfs: $name (needed by the binary) is not in $cross" >&2; exit 1; }
            copy_owned "$cross/$name" "/lib/aarch64-linux-gnu/$name"
            queue="$queue $(needed "$cross/$name")"
        done
        ;;
    *) echo "image-rootfs: unknown ARCH '$arch' (amd64, arm64)" >&2; exit 1 ;;
esac

cat > "$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > "$rootfs/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
echo "hosts: files dns" > "$rootfs/etc/nsswitch.conf"
