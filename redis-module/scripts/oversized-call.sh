#!/usr/bin/env bash
# One SLUICEGATE.DECIDE call whose packed argument is MB megabytes of empty groups ("c\0\0"
# repeated), sent to a redis-server that loads MODULE (a .so): prints the reply's first
# bytes, redis-server's peak RSS (VmHWM), used_memory_peak and the CPU time the call took.
#   redis-module/scripts/oversized-call.sh target/release/libsluicegate_redis.so [MB]
set -euo pipefail
module=$(realpath "$1")
mb=${2:-30}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    --loadmodule "$module" --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
until redis-cli -p "$port" PING >/dev/null 2>&1; do
    kill -0 $pid 2>/dev/null || { cat "$dir/log"; exit 1; }
    sleep 0.05
done
python3 -c "import sys; sys.stdout.buffer.write(b'c\0\0' * ($mb * 1000 * 1000 // 3))" >"$dir/blob"
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(cpu)
redis-cli -p "$port" -x SLUICEGATE.DECIDE k <"$dir/blob" | head -c 200 >"$dir/reply" || true
after=$(cpu)
sleep 0.3 # a serverCron run, which records used_memory_peak
echo "reply: $(head -c 120 "$dir/reply" | tr -d '\0' | tr '\n' ' ')"
echo "peak RSS (VmHWM): $(grep VmHWM /proc/$pid/status | awk '{print $2, $3}')"
echo "used_memory_peak: $(redis-cli -p "$port" INFO memory | grep '^used_memory_peak:' | cut -d: -f2 | tr -d '\r') bytes"
echo "CPU time: $(( (after - before) * 1000 / hz )) ms"
redis-cli -p "$port" PING
