#!/bin/sh
# The archiver for C code that a crate's build script compiles with zig-cc.sh (cc's AR_<target>):
# zig's own ar, which reads every target's objects.
venv="$(cd "$(dirname "$0")/../.." && pwd)/target/dist-venv"
exec "$venv/bin/python3" -m ziglang ar "$@"
