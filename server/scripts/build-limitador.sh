#!/usr/bin/env bash
# Builds Limitador's server (Kuadrant/limitador, limitador-server) from a checkout outside this
# repository, for server/scripts/vs-limitador.sh. Nothing of it is committed here.
#
#   LIMITADOR_SRC=/work/limitador bash server/scripts/build-limitador.sh
#
# LIMITADOR_SRC: a checkout of github.com/Kuadrant/limitador (e.g. `git --git-dir=<bare>
# worktree add`, or `git archive HEAD | tar -x`). It needs `protoc` (Debian's
# protobuf-compiler). Its RocksDB disk storage is left out of the build: the library is taken
# with `default-features = false, features = ["redis_storage"]`, and the server's `disk`
# subcommand is patched to exit with a message (the patch touches only that storage; the
# memory and Redis paths are Limitador's own). The build uses Limitador's release profile
# (lto = true, codegen-units = 1) in its own target dir, LIMITADOR_TARGET
# ($LIMITADOR_SRC/target by default). Prints the binary's path.
set -euo pipefail
src="${LIMITADOR_SRC:?set LIMITADOR_SRC to a checkout of Kuadrant/limitador}"
export CARGO_TARGET_DIR="${LIMITADOR_TARGET:-$src/target}"
command -v protoc >/dev/null || { echo "protoc is needed (apt-get install protobuf-compiler)" >&2; exit 1; }

python3 - "$src" <<'PY'
import re, sys, pathlib
src = pathlib.Path(sys.argv[1])
def patch(rel, pairs):
    p = src / rel
    text = p.read_text()
    for old, new in pairs:
        if new in text and old not in text:
            continue  # already patched
        if old not in text:
            sys.exit(f"build-limitador: {rel} changed upstream; cannot find {old!r}")
        text = text.replace(old, new)
    p.write_text(text)

patch("limitador-server/Cargo.toml", [
    ('limitador = { path = "../limitador" }',
     'limitador = { path = "../limitador", default-features = false, features = ["redis_storage"] }'),
])
patch("limitador-server/src/main.rs", [
    ("use limitador::storage::disk::DiskStorage;\n", ""),
    ("storage::disk::OptimizeFor::Space", "0u8"),
    ("storage::disk::OptimizeFor::Throughput", "1u8"),
])
p = src / "limitador-server/src/main.rs"
text = p.read_text()
start = text.find("    fn disk_limiter(cfg: DiskStorageConfiguration) -> Self {")
if start < 0:
    sys.exit("build-limitador: disk_limiter not found")
if "disk storage is left out of this build" not in text:
    end = text.find("\n    }\n", start) + len("\n    }\n")
    text = text[:start] + (
        "    fn disk_limiter(cfg: DiskStorageConfiguration) -> Self {\n"
        "        eprintln!(\"disk storage is left out of this build ({})\", cfg.path);\n"
        "        process::exit(1)\n"
        "    }\n") + text[end:]
    p.write_text(text)
# The keys' binary encoding sits behind disk_storage upstream, though the Redis storage uses it.
patch("limitador/src/storage/keys.rs", [
    ('#[cfg(feature = "disk_storage")]\npub mod bin {',
     '#[cfg(any(feature = "disk_storage", feature = "redis_storage"))]\npub mod bin {'),
])
patch("limitador/src/counter.rs", [
    ('#[cfg(feature = "disk_storage")]\n    pub(crate) fn variables_for_key',
     '#[cfg(any(feature = "disk_storage", feature = "redis_storage"))]\n    pub(crate) fn variables_for_key'),
])
patch("limitador-server/src/config.rs", [
    ("pub optimization: storage::disk::OptimizeFor,", "pub optimization: u8,"),
])
PY

(cd "$src" && cargo build --release -p limitador-server ${JOBS:+-j "$JOBS"} >&2)
echo "$CARGO_TARGET_DIR/release/limitador-server"
