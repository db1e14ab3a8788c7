# The platforms scripts/dist/ builds for, one Rust target each, and how each is built.
# Sourced (bash) by the dist scripts; `target_info TRIPLE` sets:
#   zig_target   zig's target for the linker (scripts/dist/zig-cc.sh); empty: not zig
#   linker       cargo's linker for the target
#   npm_platform napi-rs's platform name (the npm package sluicegate-<npm_platform>)
#   wheel_compat maturin's --compatibility (the wheel's platform tag), empty: maturin's own
#   short        the architecture and libc in file names (x86_64-linux-gnu, aarch64-linux-musl)
#   runs_here    yes when this x86-64 Linux machine runs it (natively, or arm64 under qemu)
#
# glibc targets link against glibc 2.17's symbols (manylinux2014, RHEL 7 and later); musl ones
# against musl (Alpine); macOS ones against zig's copy of the macOS SDK's stubs (10.12 for
# x86-64, 11.0 for arm64, the Rust targets' minimums); Windows through Debian's mingw-w64
# (the GNU ABI: Node and CPython load any DLL that exports their entry point).

# Every target `scripts/dist.sh --all` builds, in build order.
all_targets=(
    x86_64-unknown-linux-gnu
    aarch64-unknown-linux-gnu
    x86_64-unknown-linux-musl
    aarch64-unknown-linux-musl
    x86_64-apple-darwin
    aarch64-apple-darwin
    x86_64-pc-windows-gnu
)
# The ones sluicegate-server and the Redis module are built for (Linux; the server's musl
# builds are static).
server_targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
module_targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)

# This folder, absolute: the scripts that source this file change directory.
dist_scripts="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

target_info() {
    local zig_cc="$dist_scripts/zig-cc.sh"
    zig_target="" linker="$zig_cc" wheel_compat="" runs_here=no
    case "$1" in
        x86_64-unknown-linux-gnu)   zig_target=x86_64-linux-gnu.2.17  npm_platform=linux-x64-gnu    wheel_compat=manylinux2014 short=x86_64-linux-gnu   runs_here=yes ;;
        aarch64-unknown-linux-gnu)  zig_target=aarch64-linux-gnu.2.17 npm_platform=linux-arm64-gnu  wheel_compat=manylinux2014 short=aarch64-linux-gnu  runs_here=yes ;;
        x86_64-unknown-linux-musl)  zig_target=x86_64-linux-musl      npm_platform=linux-x64-musl   wheel_compat=musllinux_1_2 short=x86_64-linux-musl  runs_here=yes ;;
        aarch64-unknown-linux-musl) zig_target=aarch64-linux-musl     npm_platform=linux-arm64-musl wheel_compat=musllinux_1_2 short=aarch64-linux-musl runs_here=yes ;;
        x86_64-apple-darwin)        zig_target=x86_64-macos.10.12     npm_platform=darwin-x64       short=x86_64-macos ;;
        aarch64-apple-darwin)       zig_target=aarch64-macos.11.0     npm_platform=darwin-arm64     short=aarch64-macos ;;
        x86_64-pc-windows-gnu)      linker=x86_64-w64-mingw32-gcc     npm_platform=win32-x64-gnu    short=x86_64-windows-gnu ;;
        *) echo "dist: unknown target '$1' (known: ${all_targets[*]})" >&2; return 2 ;;
    esac
}

# Runs COMMAND with cargo's linker for TRIPLE in the environment, zig's target for zig-cc.sh,
# and, for zig targets, zig as the C compiler and archiver of build scripts (the cc crate's
# CC_<triple>, AR_<triple>: a test dependency compiles C).
with_linker() {
    local triple=$1; shift
    target_info "$triple" || return
    local var compilers=()
    var="CARGO_TARGET_$(echo "$triple" | tr '[:lower:]-' '[:upper:]_')_LINKER"
    if [ -n "$zig_target" ]; then
        compilers=("CC_${triple//-/_}=$linker" "AR_${triple//-/_}=$(dirname "$linker")/zig-ar.sh")
    fi
    env "$var=$linker" ZIG_TARGET="$zig_target" "${compilers[@]}" "$@"
}
