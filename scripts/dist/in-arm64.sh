#!/usr/bin/env bash
# Runs COMMAND (a bash script) inside the arm64 userland (scripts/dist/arm64-userland.sh),
# every program in it an arm64 one under qemu, with WORK (a folder of this machine) at
# /work inside and this machine's npm (JavaScript, run by the userland's arm64 node) at
# /opt/npm. The mounts live in a mount namespace of the command's own (unshare): they vanish
# with it, so nothing stays mounted under target/. Root only (chroot).
# Usage: in-arm64.sh WORK 'COMMAND' [ARGS...]   (ARGS are $1... of COMMAND)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root=$(bash "$here/arm64-userland.sh")
work=$(realpath "$1"); shift
npm_root=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$root/work" "$root/opt/npm"
# npm itself is JavaScript: the userland's node runs this machine's copy.
for tool in npm npx; do
    if [ ! -x "$root/usr/bin/$tool" ]; then
        printf '#!/bin/sh\nexec node /opt/npm/bin/%s-cli.js "$@"\n' "$tool" > "$root/usr/bin/$tool"
        chmod 0755 "$root/usr/bin/$tool"
    fi
done
exec unshare --mount --propagation private bash -s "$root" "$work" "$npm_root" "$@" <<'SH'
set -euo pipefail
root=$1 work=$2 npm_root=$3 command=$4; shift 4
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --bind "$work" "$root/work"
mount --bind -o ro "$npm_root" "$root/opt/npm"
exec chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/work/home LANG=C.UTF-8 \
    /bin/bash -c "$command" in-arm64 "$@"
SH
