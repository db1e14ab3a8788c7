#!/usr/bin/env bash
# Lets this x86-64 machine run arm64 (aarch64) Linux programs: Debian's qemu-user-static,
# registered with the kernel's binfmt_misc (binfmt-support's update-binfmts, with the F flag
# Debian sets, so the emulator is found inside a chroot too) so that the kernel hands every
# arm64 ELF to it, and Debian's arm64 C runtime for programs run outside a chroot
# (libc6-arm64-cross, libgcc-s1-arm64-cross: /usr/aarch64-linux-gnu, qemu's -L prefix, and
# the arm64 image's libraries). Installs what is missing (root: apt-get). Idempotent.
set -euo pipefail

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if ! command -v qemu-aarch64-static >/dev/null 2>&1 || ! command -v update-binfmts >/dev/null 2>&1 \
        || [ ! -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || [ ! -e /usr/aarch64-linux-gnu/lib/libgcc_s.so.1 ]; then
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        qemu-user-static binfmt-support libc6-arm64-cross libgcc-s1-arm64-cross >/dev/null
fi
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    $sudo mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    $sudo update-binfmts --enable qemu-aarch64
fi
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 \
    || { echo "qemu: binfmt_misc's qemu-aarch64 entry is not enabled" >&2; exit 1; }
