#!/usr/bin/env bash
# The npm packages without Rust: a fresh npm project, where `command -v cargo` fails
# (scripts/dist/without-rust.sh), installs the two tarballs of dist/ and express from npm,
# and runs the express example of bindings/node/README.md's "Install" section on 127.0.0.1:
# five 200s, then a 429 with its headers (scripts/dist/express-check.js). Also checks that the
# JavaScript package has no lifecycle script and names the platform package, and that the
# module needs no glibc newer than 2.17.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
main="$PWD/dist/sluicegate-$version.tgz"
platform="$PWD/dist/sluicegate-linux-x64-gnu-$version.tgz"
for file in "$main" "$platform"; do
    [ -f "$file" ] || { echo "test-node: $file is missing: run scripts/dist.sh first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/sluicegate-dist-node.XXXXXX)
trap 'rm -rf "$work"' EXIT

tar -xzf "$main" -O package/package.json | node -e '
    const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
    if (m.scripts) throw new Error(`the package has scripts: ${JSON.stringify(m.scripts)}`);
    if (m.optionalDependencies?.["sluicegate-linux-x64-gnu"] !== m.version)
        throw new Error("the package does not name sluicegate-linux-x64-gnu@" + m.version);
    console.log("ok: sluicegate has no install script; optionalDependencies:", JSON.stringify(m.optionalDependencies));'

# The module is linked against glibc 2.17's symbols (scripts/dist/zig-cc.sh), nothing newer.
tar -xzf "$platform" -C "$work" package/sluicegate.linux-x64-gnu.node
newest=$(objdump -T "$work/package/sluicegate.linux-x64-gnu.node" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
[ "$(printf '%s\n' "$newest" GLIBC_2.17 | sort -V | tail -1)" = GLIBC_2.17 ] \
    || { echo "test-node: the module needs $newest, newer than glibc 2.17" >&2; exit 1; }
echo "ok: sluicegate.linux-x64-gnu.node needs glibc symbols up to $newest"

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
    node express-check.js app.js
' test-node "$work/app" "$main" "$platform"
echo "test-node: passed"
