#!/usr/bin/env bash
# Makes target/arm64/rootfs, an arm64 Debian 13 (trixie) userland from Debian's own packages
# (minbase, with Python 3 and its venv module, Node.js, redis-server), whose programs run
# under qemu (scripts/dist/qemu.sh). `debootstrap --foreign` downloads the packages and
# unpacks the essential ones; this script unpacks the rest the same way, on this machine, and
# writes the few files their maintainer scripts would have (the CA bundle, /etc/passwd and
# /etc/group, awk): debootstrap's second stage runs every maintainer script under emulation,
# which took over 20 minutes on a loaded two-core machine without finishing; this takes about
# one. Nothing in it is configured beyond what the tests use (python3, node, redis-server).
# Cached: kept while target/arm64/rootfs/.sluicegate-userland names the same package list.
# Prints the rootfs's path. Trixie, not the host's bookworm: its Node.js (20.19) runs this
# machine's npm, which needs 20.17.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bash scripts/dist/qemu.sh
root="$PWD/target/arm64/rootfs"
packages="python3,python3-venv,nodejs,redis-server,ca-certificates"
stamp="trixie minbase $packages"
if [ -f "$root/.sluicegate-userland" ] && [ "$(cat "$root/.sluicegate-userland")" = "$stamp" ]; then
    echo "$root"
    exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
# A half-made one (an interrupted run) is made again from nothing, in a folder of its own
# (nothing is ever mounted under it but by in-arm64.sh, in a mount namespace of its own).
work="$root.tmp"
rm -rf --one-file-system "$work" "$root"
mkdir -p "$(dirname "$root")"
echo "arm64-userland: debootstrap --foreign ($packages)" >&2
debootstrap --arch=arm64 --variant=minbase --foreign --include="$packages" trixie "$work" >&2
echo "arm64-userland: unpacking $(ls "$work"/var/cache/apt/archives/*.deb | wc -l) packages" >&2
for deb in "$work"/var/cache/apt/archives/*.deb; do
    # As debootstrap unpacks: merged /usr's symlinks (/bin -> usr/bin) stay symlinks.
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$work"
done
# What maintainer scripts would have written: the users (base-passwd), awk (mawk's
# alternative), the CA bundle (ca-certificates; this machine's, for the npm registry and
# PyPI), and names resolved as here.
cp "$work/usr/share/base-passwd/passwd.master" "$work/etc/passwd"
cp "$work/usr/share/base-passwd/group.master" "$work/etc/group"
[ -e "$work/usr/bin/awk" ] || ln -s mawk "$work/usr/bin/awk"
mkdir -p "$work/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$work/etc/ssl/certs/ca-certificates.crt"
cp /etc/resolv.conf "$work/etc/resolv.conf"
rm -f "$work"/var/cache/apt/archives/*.deb
echo "$stamp" > "$work/.sluicegate-userland"
mv "$work" "$root"
echo "$root"
