#!/usr/bin/env bash
# Writes the repository's URL into the manifests of what the release publishes, in the
# release workflow's checkout (never committed: the URL is the host's, not the source's):
# `repository` of the three crates (crates.io resolves their READMEs' relative links against
# it), of the npm package (npm checks provenance against it) and the Python package's
# project.urls. Usage: stamp-repository.sh URL   (e.g. https://github.com/OWNER/REPO)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
url=${1:?usage: stamp-repository.sh URL}
case "$url" in https://*) ;; *) echo "stamp-repository: '$url' is not an https URL" >&2; exit 2 ;; esac
for manifest in Cargo.toml server/Cargo.toml redis-module/Cargo.toml; do
    grep -q '^repository *=' "$manifest" && { echo "stamp-repository: $manifest has one" >&2; exit 1; }
    # Right after the package's license line (within [package]).
    sed -i "0,/^license = /s||repository = \"$url\"\\n&|" "$manifest"
done
(cd bindings/node && npm pkg set repository.type=git "repository.url=git+$url.git")
printf '\n[project.urls]\nRepository = "%s"\n' "$url" >> bindings/python/pyproject.toml
# The platform packages take theirs from package.json (napi create-npm-dirs).
grep -n "repository" Cargo.toml server/Cargo.toml redis-module/Cargo.toml bindings/node/package.json \
    bindings/python/pyproject.toml
