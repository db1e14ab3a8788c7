#!/usr/bin/env bash
# One version for everything this repository ships: the workspace's
# `[workspace.package] version` in Cargo.toml. The crates inherit it and maturin gives it to
# the Python package (pyproject.toml's `dynamic = ["version"]`); npm needs a literal one in
# bindings/node/package.json, CHANGELOG.md's newest entry names it, and the Kubernetes
# Deployment runs the image tagged with it. This script fails,
# naming the file, when any of them says otherwise. Prints the version when they agree.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(awk '/^\[workspace\.package\]/ { s = 1; next } /^\[/ { s = 0 }
    s && /^version *=/ { gsub(/.*= *"|".*/, ""); print; exit }' Cargo.toml)
[ -n "$version" ] || { echo "check-version: no [workspace.package] version in Cargo.toml" >&2; exit 1; }

status=0
fail() { echo "check-version: $1 (Cargo.toml's [workspace.package] version is $version)" >&2; status=1; }

for manifest in Cargo.toml server/Cargo.toml bindings/node/Cargo.toml bindings/python/Cargo.toml; do
    grep -q '^version.workspace = true$' "$manifest" || fail "$manifest does not inherit version.workspace"
done
grep -q '^dynamic = \["version"\]$' bindings/python/pyproject.toml \
    || fail 'bindings/python/pyproject.toml must read the version from Cargo (dynamic = ["version"])'
! grep -q '^version *=' bindings/python/pyproject.toml \
    || fail "bindings/python/pyproject.toml sets a version of its own"
# The server's dependency on the library names the version crates.io will hold.
dependency=$(sed -n 's/^sluicegate = { path = "\.\.", version = "\([^"]*\)".*/\1/p' server/Cargo.toml)
[ "$dependency" = "$version" ] || fail "server/Cargo.toml depends on sluicegate version '$dependency'"
npm_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' bindings/node/package.json)
[ "$npm_version" = "$version" ] || fail "bindings/node/package.json has version '$npm_version'"
changelog=$(sed -n 's/^## \[\([0-9][^]]*\)\].*/\1/p' CHANGELOG.md | head -1)
[ "$changelog" = "$version" ] || fail "CHANGELOG.md's newest release is '$changelog'"
image=$(sed -n 's|^ *image: localhost/sluicegate-server:\(.*\)$|\1|p' deploy/kubernetes/deployment.yaml)
[ "$image" = "$version" ] || fail "deploy/kubernetes/deployment.yaml runs image tag '$image'"

[ "$status" -eq 0 ] && echo "$version"
exit "$status"
