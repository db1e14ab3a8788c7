#!/usr/bin/env bash
# The three crates crates.io gets: sluicegate, sluicegate-server, sluicegate-redis-module.
#   crates.sh           what each ships (`cargo package --list`): its README, and for the library
#                       the manual its docs include; nothing of another package. Every relative
#                       link in those READMEs names a file of this repository: crates.io
#                       resolves them against `repository`, which the release writes into the
#                       manifests (scripts/dist/stamp-repository.sh). The manual, the crate's
#                       docs on docs.rs, links to no file at all (docs.rs could not follow it).
#                       Seconds; CI runs it.
#   crates.sh --verify  then `cargo publish --dry-run` of the three together: cargo packages each
#                       and builds it from its .crate alone, the server and the module against
#                       the library's .crate rather than the checkout, as a user's `cargo add
#                       sluicegate` or `cargo install sluicegate-server` would (minutes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
crates=(sluicegate sluicegate-server sluicegate-redis-module)
declare -A dirs=([sluicegate]=. [sluicegate-server]=server [sluicegate-redis-module]=redis-module)
declare -A must_ship=([sluicegate]="README.md docs/manual.md src/lib.rs" \
    [sluicegate-server]="README.md build.rs proto/envoy/service/ratelimit/v3/rls.proto src/main.rs" \
    [sluicegate-redis-module]="README.md src/lib.rs")

status=0
for crate in "${crates[@]}"; do
    list=$(cargo package --locked --allow-dirty --list -p "$crate" 2>/dev/null) \
        || { cargo package --locked --allow-dirty --list -p "$crate" >/dev/null; exit 1; }
    for file in ${must_ship[$crate]}; do
        grep -qx "$file" <<<"$list" || { echo "crates: $crate does not ship $file" >&2; status=1; }
    done
    # Another package's files (the bindings, the server inside the library's folder).
    if grep -E '^(bindings|server|redis-module|loom-tests|fuzz|scripts|deploy|target)/' <<<"$list"; then
        echo "crates: $crate ships the files above, which belong elsewhere" >&2; status=1
    fi
    size=$(( $(sed "s|^|${dirs[$crate]}/|" <<<"$list" | grep -v -e '/Cargo.toml.orig$' -e '/.cargo_vcs_info.json$' \
        -e '/Cargo.lock$' | xargs -d '\n' cat 2>/dev/null | wc -c) / 1024 ))
    echo "ok: $crate ships $(wc -l <<<"$list") files (${size} KiB before compression)"
done

# Relative links: in a README, each names a file or folder of the repository, from the
# README's folder; the manual (rustdoc) has none but intra-doc links (`crate::...`).
python3 - docs/manual.md README.md server/README.md redis-module/README.md <<'PY' || status=1
import os, re, sys
bad = 0
manual, readmes = sys.argv[1], sys.argv[2:]
for doc in [manual, *readmes]:
    text = re.sub(r"```.*?```", "", open(doc, encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:|^#", target) or "::" in target:
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
        if doc == manual:
            print(f"crates: {doc} links to the file {target}, which docs.rs cannot show", file=sys.stderr)
            bad += 1
        elif not os.path.exists(path):
            print(f"crates: {doc} links to {target}, which is not in the repository", file=sys.stderr)
            bad += 1
if not bad:
    print(f"ok: the relative links of {', '.join(readmes)} name files of the repository; {manual} links to none")
sys.exit(1 if bad else 0)
PY

[ "$status" -eq 0 ] || exit "$status"
if [ "${1:-}" = --verify ]; then
    cargo publish --locked --dry-run --allow-dirty -p sluicegate -p sluicegate-server -p sluicegate-redis-module
    echo "ok: cargo publish --dry-run built each crate from its .crate"
fi
