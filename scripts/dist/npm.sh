#!/usr/bin/env bash
# Builds the npm packages into OUT (default dist/), in napi-rs's layout:
#   sluicegate-VERSION.tgz                 the JavaScript and its types; no install script; its
#                                          optionalDependencies name the platform packages built here
#   sluicegate-linux-x64-gnu-VERSION.tgz   the native module (`os`, `cpu` and `libc` say where it
#                                          loads; glibc 2.17 or later)
# The module is built by bindings/node/scripts/build.js (`napi build --platform --release`);
# `napi create-npm-dirs` and `napi artifacts` make the platform packages in bindings/node/npm/
# (generated from package.json, so git ignores it; napi keeps them inside the package), and
# the JavaScript package is staged in target/dist/npm/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=$(realpath -m "${1:-dist}")
stage="$PWD/target/dist/npm"
node_dir="$PWD/bindings/node"

cd "$node_dir"
[ -x node_modules/.bin/napi ] || npm ci --ignore-scripts --no-audit --no-fund
# Linked by zig against glibc 2.17's symbols, as the wheel is (scripts/dist/zig-cc.sh): the
# package then loads on any x86-64 Linux with glibc 2.17 or later. cargo builds it for the
# explicit target, in target/x86_64-unknown-linux-gnu/, beside the wheel's build.
bash ../../scripts/dist/zig-venv.sh >/dev/null
rm -f lib/*.node
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$PWD/../../scripts/dist/zig-cc.sh" \
    node scripts/build.js --target x86_64-unknown-linux-gnu

rm -rf "$stage" npm
mkdir -p "$stage" "$out"
npx --no-install napi create-npm-dirs --npm-dir npm
npx --no-install napi artifacts --output-dir lib --npm-dir npm
# artifacts also leaves a copy at the package root, which nothing loads.
rm -f sluicegate.*.node
# The platform packages that received a module: the ones to pack and to name.
platforms=()
for dir in npm/*/; do
    if compgen -G "$dir*.node" >/dev/null; then platforms+=("$(basename "$dir")"); fi
done
[ "${#platforms[@]}" -gt 0 ] || { echo "dist/npm: napi artifacts placed no .node" >&2; exit 1; }

# The JavaScript package: the files package.json's `files` lists, and a package.json
# without scripts and devDependencies, naming the built platform packages.
mkdir -p "$stage/sluicegate/lib"
cp index.js index.mjs index.d.ts README.md "$stage/sluicegate/"
cp lib/*.js "$stage/sluicegate/lib/"
node "$PWD/../../scripts/dist/npm-manifest.js" package.json "${platforms[@]}" > "$stage/sluicegate/package.json"

for platform in "${platforms[@]}"; do
    npm pack --silent --pack-destination "$out" "./npm/$platform"
done
npm pack --silent --pack-destination "$out" "$stage/sluicegate"
