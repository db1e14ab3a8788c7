#!/usr/bin/env bash
# The npm packages without Rust, on the machine it runs on (x86-64 or arm64, glibc or musl;
# scripts/dist/test-arm64.sh runs this inside an arm64 Debian): a fresh npm project, where
# `command -v cargo` fails (scripts/dist/without-rust.sh), installs the JavaScript package and
# this machine's platform package from dist/ and express from npm, and runs the express
# example of bindings/node/README.md's "Install" section on 127.0.0.1: five 200s, then a 429
# with its headers (scripts/dist/express-check.js); then replays the Rust engine's answers on
# fixed traces through the installed module (bindings/node/test/traces.test.js: the same
# decisions, exactly). A second project installs the JavaScript package alone (npm told to
# omit optional dependencies): requiring it fails with a sentence naming the package to
# install. Also checks that the JavaScript package has no lifecycle script and names the
# platform package. Which glibc symbols the module needs, scripts/dist/check-binaries.sh checks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
libc=gnu
if ldd --version 2>&1 | grep -qi musl; then libc=musl; fi
name="linux-$(node -p process.arch)-$libc"
main="$PWD/dist/sluicegate-$version.tgz"
platform="$PWD/dist/sluicegate-$name-$version.tgz"
for file in "$main" "$platform"; do
    [ -f "$file" ] || { echo "test-node: $file is missing: run scripts/dist.sh first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/sluicegate-dist-node.XXXXXX)
trap 'rm -rf "$work"' EXIT

tar -xzf "$main" -O package/package.json | node -e '
    const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const platform = `sluicegate-${process.argv[1]}`;
    if (m.scripts) throw new Error(`the package has scripts: ${JSON.stringify(m.scripts)}`);
    if (m.optionalDependencies?.[platform] !== m.version)
        throw new Error(`the package does not name ${platform}@${m.version}`);
    console.log("ok: sluicegate has no install script; optionalDependencies:", JSON.stringify(m.optionalDependencies));' "$name"

# The first js block of the README's "## Install" section.
mkdir -p "$work/app"
awk '/^## Install/ { s = 1 } s && /^```js$/ { c = 1; next } c && /^```$/ { exit } c' \
    bindings/node/README.md > "$work/app/app.js"
grep -q "require('sluicegate')" "$work/app/app.js" \
    || { echo "test-node: no express example in bindings/node/README.md's Install section" >&2; exit 1; }
cp scripts/dist/express-check.js "$work/app/"

bash scripts/dist/without-rust.sh "$work/home" bash -c '
    set -euo pipefail
    cd "$1"
    npm init -y >/dev/null
    npm install --no-audit --no-fund "$2" "$3" express@5
    node express-check.js app.js "$4"
    # The checkout'"'"'s trace test, its `require("..")` resolved to this project'"'"'s packages.
    NODE_PATH="$1/node_modules" node --test "$5/bindings/node/test/traces.test.js"

    # Item: one package per platform, one error when it is missing.
    mkdir ../bare && cd ../bare
    npm init -y >/dev/null
    npm install --no-audit --no-fund --omit=optional "$2"
    [ ! -e "node_modules/sluicegate-$4" ] || { echo "test-node: npm installed sluicegate-$4 anyway" >&2; exit 1; }
    if message=$(node -e "require(\"sluicegate\")" 2>&1); then
        echo "test-node: sluicegate loaded without its platform package" >&2; exit 1
    fi
    echo "$message" | grep -m1 "^Error: "
    echo "$message" | grep -q "npm install sluicegate-$4@$6" \
        || { echo "test-node: the error does not name sluicegate-$4@$6: $message" >&2; exit 1; }
    ! echo "$message" | grep -qi "npm has a bug" \
        || { echo "test-node: the error is napi-rs'"'"'s: $message" >&2; exit 1; }
    echo "ok: without its platform package, require(\"sluicegate\") names sluicegate-$4@$6"
' test-node "$work/app" "$main" "$platform" "$name" "$PWD" "$version"
echo "test-node: passed"
