#!/usr/bin/env bash
# The image: loads dist/sluicegate-server-VERSION.oci.tar into podman (each architecture of
# it, when it is an index of amd64 and arm64: arm64's runs under qemu, scripts/dist/qemu.sh),
# checks it runs as user 65532, then runs it as Kubernetes would (read-only root filesystem with no tmpfs added, no
# capabilities, a config of 5 a minute mounted read-only at /etc/sluicegate), with the ports
# published on 127.0.0.1 only, and checks from outside the container: /healthcheck answers
# 200, POST /json answers OK five times and then OVER_LIMIT (429), and after SIGTERM the
# container exits 0 within 5 s. Debian's podman here needs `--runtime runc` and limits lower
# than the host's (raising one is refused). Where podman cannot run a container at all, this
# fails and says so. Every container it starts, it removes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
version=$(bash scripts/check-version.sh)
archive="$PWD/dist/sluicegate-server-$version.oci.tar"
image="localhost/sluicegate-server:$version"
[ -f "$archive" ] || { echo "test-image: $archive is missing: run scripts/dist.sh first" >&2; exit 1; }
command -v podman >/dev/null 2>&1 \
    || { echo "test-image: podman is missing (Debian: apt-get install podman runc iptables)" >&2; exit 1; }

run=(podman run --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=1024:1024)
name="sluicegate-dist-test-$$"
work=$(mktemp -d /tmp/sluicegate-dist-image.XXXXXX)
cleanup() {
    podman rm --force --ignore "$name" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The architectures the archive holds: one image, or an index naming several.
mapfile -t arches < <(python3 - "$archive" <<'PY'
import json, sys, tarfile
archive = tarfile.open(sys.argv[1])
read = lambda name: json.load(archive.extractfile(name))
top = read("index.json")["manifests"]
if len(top) == 1 and top[0]["mediaType"].endswith("image.index.v1+json"):
    top = read("blobs/sha256/" + top[0]["digest"].split(":")[1])["manifests"]
print("\n".join(m.get("platform", {}).get("architecture", "amd64") for m in top))
PY
)
echo "ok: the archive holds ${#arches[@]} image(s): ${arches[*]}"
if [[ " ${arches[*]} " == *" arm64 "* ]]; then bash scripts/dist/qemu.sh; fi

# A GCRA limit, so that no window boundary can fall between the requests and reset the count.
mkdir -p "$work/config"
cat > "$work/config/example.yaml" <<'YAML'
domain: example
descriptors:
  - key: path
    rate_limit: {quota: "5/minute", algorithm: gcra}
YAML
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The image of ARCH, from the archive (not what the build left in podman's store), run.
test_arch() {
    local arch=$1
    podman manifest rm "$image" >/dev/null 2>&1 || true
    podman rmi --force "$image" >/dev/null 2>&1 || true
    id=$(podman pull --quiet --arch "$arch" "oci-archive:$archive")
    podman tag "$id" "$image"
    found=$(podman image inspect --format '{{.Architecture}}' "$image")
    [ "$found" = "$arch" ] || { echo "test-image: asked for $arch, podman loaded $found" >&2; exit 1; }
    podman image inspect --format '{{.Size}}' "$image" | awk '{ printf "ok: %s (%s) loaded, %.1f MiB\n", "'"$image"'", "'"$arch"'", $1 / 1048576 }'
    user=$(podman image inspect --format '{{.Config.User}}' "$image")
    [ "$user" = "65532:65532" ] || { echo "test-image: the image's user is '$user'" >&2; exit 1; }
    echo "ok: the image runs as $user"

    if ! out=$("${run[@]}" --rm --network none "$image" --version 2>&1); then
        echo "test-image: podman cannot run containers on this machine:" >&2
        echo "$out" >&2
        exit 1
    fi
    [ "$out" = "sluicegate-server $version" ] || { echo "test-image: --version printed '$out'" >&2; exit 1; }
    echo "ok: podman runs it: $out"

    http=$(port) grpc=$(port)
    "${run[@]}" --detach --name "$name" --read-only --read-only-tmpfs=false --cap-drop ALL \
        --security-opt no-new-privileges \
        --publish "127.0.0.1:$http:8080" --publish "127.0.0.1:$grpc:8081" \
        --volume "$work/config:/etc/sluicegate:ro" "$image" >/dev/null

    python3 scripts/dist/json-check.py "$http" test-image

    pid=$(podman inspect --format '{{.State.Pid}}' "$name")
    uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
    [ "$uid" = 65532 ] || { echo "test-image: the server runs as uid '$uid'" >&2; exit 1; }
    echo "ok: the server process (pid $pid on the host) runs as uid $uid"

    sent=$EPOCHREALTIME
    podman kill --signal TERM "$name" >/dev/null
    status=$(timeout 10 podman wait "$name") || { echo "test-image: still running 10 s after SIGTERM" >&2; exit 1; }
    took=$(awk -v a="$sent" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
    echo "ok: exited with status $status, $took s after SIGTERM"
    [ "$status" = 0 ] || { echo "test-image: exit status $status after SIGTERM" >&2; podman logs "$name" >&2; exit 1; }
    awk -v t="$took" 'BEGIN { exit !(t < 5) }' || { echo "test-image: took $took s to exit after SIGTERM" >&2; exit 1; }
    podman rm --force --ignore "$name" >/dev/null 2>&1
    echo "test-image: $arch passed"
}

for arch in "${arches[@]}"; do
    test_arch "$arch"
done
echo "test-image: passed"
