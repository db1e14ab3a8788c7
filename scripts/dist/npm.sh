#!/usr/bin/env bash
# Builds the npm packages into OUT (default dist/), in napi-rs's layout:
#   sluicegate-VERSION.tgz                  the JavaScript and its types; no install script; its
#                                           optionalDependencies name the platform packages built
#   sluicegate-PLATFORM-VERSION.tgz         a native module each (`os`, `cpu` and `libc` say where
#                                           it loads): linux-x64-gnu, linux-arm64-gnu (glibc 2.17
#                                           or later), linux-x64-musl, linux-arm64-musl (Alpine),
#                                           darwin-x64, darwin-arm64, win32-x64-gnu
# Usage: npm.sh [OUT] [TRIPLE...]   (default: x86_64-unknown-linux-gnu; scripts/dist/targets.sh)
#        npm.sh OUT --prebuilt      packs the modules already in bindings/node/lib/ (the release
#                                   workflow, whose runners each built one)
# Each module is built by bindings/node/scripts/build.js (`napi build --platform --release
# --target TRIPLE`), linked by zig or mingw-w64 (targets.sh); `napi create-npm-dirs` makes the
# platform packages in bindings/node/npm/ (generated from package.json, so git ignores it),
# each module is moved into its own, and the JavaScript package is staged in target/dist/npm/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/dist/targets.sh
out=$(realpath -m "${1:-dist}")
shift || true
stage="$PWD/target/dist/npm"
node_dir="$PWD/bindings/node"

cd "$node_dir"
[ -x node_modules/.bin/napi ] || npm ci --ignore-scripts --no-audit --no-fund
if [ "${1:-}" != "--prebuilt" ]; then
    triples=("$@")
    [ "${#triples[@]}" -gt 0 ] || triples=(x86_64-unknown-linux-gnu)
    bash ../../scripts/dist/zig-venv.sh >/dev/null
    rm -f lib/*.node
    for triple in "${triples[@]}"; do
        echo "dist/npm: $triple"
        # cargo builds each in target/TRIPLE/, beside the wheel's build for the same target.
        with_linker "$triple" node scripts/build.js --target "$triple"
    done
fi

rm -rf "$stage" npm
mkdir -p "$stage" "$out"
npx --no-install napi create-npm-dirs --npm-dir npm
# Each module into its platform package (`napi artifacts` would, but refuses a set that lacks
# any of package.json's targets).
for module in lib/sluicegate.*.node; do
    [ -e "$module" ] || continue
    platform=${module#lib/sluicegate.}
    platform=${platform%.node}
    [ -d "npm/$platform" ] || { echo "dist/npm: $module is for no target of package.json" >&2; exit 1; }
    mv "$module" "npm/$platform/"
done
# The platform packages that received a module: the ones to pack and to name.
platforms=()
for dir in npm/*/; do
    if compgen -G "$dir*.node" >/dev/null; then platforms+=("$(basename "$dir")"); fi
done
[ "${#platforms[@]}" -gt 0 ] || { echo "dist/npm: no module in lib/ to pack" >&2; exit 1; }

# The JavaScript package: the files package.json's `files` lists, and a package.json
# without scripts and devDependencies, naming the built platform packages.
mkdir -p "$stage/sluicegate/lib"
cp index.js index.mjs index.d.ts fastify.d.ts koa.d.ts hono.d.ts nestjs.d.ts README.md "$stage/sluicegate/"
cp lib/*.js "$stage/sluicegate/lib/"
node "$PWD/../../scripts/dist/npm-manifest.js" package.json "${platforms[@]}" > "$stage/sluicegate/package.json"

for platform in "${platforms[@]}"; do
    npm pack --silent --pack-destination "$out" "./npm/$platform"
done
npm pack --silent --pack-destination "$out" "$stage/sluicegate"
