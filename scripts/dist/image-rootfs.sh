#!/usr/bin/env bash
# Assembles the build context of deploy/Containerfile: CONTEXT/rootfs/ holds BINARY as
# /usr/local/bin/sluicegate-server, every shared library it loads (with its interpreter)
# copied from the files Debian's packages installed on this machine (dpkg names the owner of
# each; their copyright files come along), and /etc/passwd, /etc/group and
# /etc/nsswitch.conf for user 65532. glibc >= 2.34 resolves host names (a Redis service's)
# with no NSS module to load, so nothing else is needed.
# Usage: image-rootfs.sh BINARY CONTEXT
set -euo pipefail
binary=$1 context=$2
rootfs="$context/rootfs"
rm -rf "$rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/etc/sluicegate" "$rootfs/usr/share/doc"
install -m 0755 "$binary" "$rootfs/usr/local/bin/sluicegate-server"

# Every library the binary loads, transitively, and its interpreter, as this machine's loader
# resolves them (ldd: our own binary, so running its loader on it is safe).
libraries=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
[ -n "$libraries" ] || { echo "image-rootfs: ldd lists no library for $binary" >&2; exit 1; }

# Each library where the dynamic loader of this machine finds it, kept at the same path.
copy_owned() {
    local path=$1 real package
    real=$(readlink -f "$path")
    # dpkg records the pre-merged-/usr path (/lib/...): ask for it, then the resolved one.
    package=$( (dpkg-query -S "$path" || dpkg-query -S "$real") 2>/dev/null | head -1 | cut -d: -f1)
    [ -n "$package" ] || { echo "image-rootfs: no Debian package owns $path" >&2; exit 1; }
    mkdir -p "$rootfs$(dirname "$path")"
    cp -L "$path" "$rootfs$path"
    if [ -f "/usr/share/doc/$package/copyright" ]; then
        mkdir -p "$rootfs/usr/share/doc/$package"
        cp "/usr/share/doc/$package/copyright" "$rootfs/usr/share/doc/$package/"
    fi
    echo "image-rootfs: $path (Debian package $package)"
}
for path in $libraries; do
    copy_owned "$path"
done

cat > "$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > "$rootfs/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
echo "hosts: files dns" > "$rootfs/etc/nsswitch.conf"
