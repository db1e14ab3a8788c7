#!/usr/bin/env bash
# The service benchmark (BENCHMARKS.md, "Service (sluicegate-server)"): builds with PROFILE
# (release by default; `service` is the shipped build), starts on free loopback ports
#   floor     sluicegate-floor: a bare tonic RLS server answering a constant OK (the floor),
#   engine    sluicegate-floor --config: the server's gRPC service and in-process engine with
#             nothing else of sluicegate-server (not in the default TARGETS: a decomposition),
#   process   sluicegate-server, state in process,
#   redis     sluicegate-server --redis, against a redis-server it starts on a free port,
#   baseline  BASELINE_BIN, another sluicegate-server binary (an earlier commit's, another
#             build profile's) run as `process` is: before/after in one alternated run,
#   floorbase FLOOR_BASELINE_BIN, another sluicegate-floor binary (another profile's) run as
#             `floor` is,
# and runs sluicegate-load against each in alternating rounds (floor, process, redis, floor,
# process, redis, ...) for every workload: 1 and 3 descriptors per request, values drawn
# uniformly from 1,000 and from 1,000,000 keys (a bare-key rule per descriptor key, 1000 per
# second per value, fixed windows: nearly every request is allowed). Two passes:
#   closed  at max: CONCURRENCY requests in flight over CONNECTIONS h2 connections,
#   open    at a fixed rate (OPEN_RATE requests/s; REDIS_OPEN_RATE for redis), latency from
#           the scheduled time.
# Prints, per pass, a Markdown table of medians over the rounds, and each target's median
# ratio to the floor measured in the same round; "CPU µs/req" is the server process's
# utime+stime (/proc/PID/stat) over the run, warm-up included, per request sent. Every
# process it starts is stopped by PID.
#
#   bash server/scripts/bench.sh                       # about 8 minutes on 2 cores
#   ROUNDS=3 DURATION=4 WARMUP=1 OPEN_RATE=5000 bash server/scripts/bench.sh
#
# Environment: ROUNDS (3), DURATION (4 s measured per run), WARMUP (1 s), CONCURRENCY (64),
# CONNECTIONS (4), OPEN_RATE (5000), REDIS_OPEN_RATE (OPEN_RATE), LOAD_THREADS (2), PASSES
# ("closed open"), TARGETS ("floor process redis"; add "engine" for the decomposition),
# DESCRIPTORS ("1 3") and KEYS ("1000 1000000": 1 is one hot key) for the workloads, LIMIT (1000,
# per second per value: 100000000 keeps a hot key within it), BASELINE_BIN (for the baseline
# target), PROFILE (the cargo profile the floor, the server and the load generator are built
# with: release, or service, the shipped build), BIN_DIR (prebuilt sluicegate-server, -floor
# and -load binaries, e.g. carried to a quieter machine: nothing is built), JOBS (cargo -j),
# OUT (a directory for the raw JSON lines and logs; a temporary one by
# default), CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-4}"
WARMUP="${WARMUP:-1}"
CONCURRENCY="${CONCURRENCY:-64}"
CONNECTIONS="${CONNECTIONS:-4}"
OPEN_RATE="${OPEN_RATE:-5000}"
REDIS_OPEN_RATE="${REDIS_OPEN_RATE:-$OPEN_RATE}"
LOAD_THREADS="${LOAD_THREADS:-2}"
PASSES="${PASSES:-closed open}"
TARGETS="${TARGETS:-floor process redis}"
PROFILE="${PROFILE:-release}"
DESCRIPTORS="${DESCRIPTORS:-1 3}"
KEYS="${KEYS:-1000 1000000}"
LIMIT="${LIMIT:-1000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"

case " $TARGETS " in
*" redis "*) command -v redis-server >/dev/null || { echo "redis-server is needed (apt-get install redis-server)" >&2; exit 1; } ;;
esac
command -v python3 >/dev/null || { echo "python3 is needed for the tables" >&2; exit 1; }

if [ -n "${BIN_DIR:-}" ]; then
    bin="$BIN_DIR"
else
    cargo build --profile "$PROFILE" -p sluicegate-server --features bench --bins ${JOBS:+-j "$JOBS"}
    bin="$CARGO_TARGET_DIR/$PROFILE"
fi

OUT="${OUT:-$(mktemp -d -t sluicegate-bench.XXXXXX)}"
mkdir -p "$OUT"
results="$OUT/results.jsonl"
: >"$results"

pids=()
stop_all() {
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap stop_all EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_port() { # port, name, log
    for _ in $(seq 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "$2 did not listen on 127.0.0.1:$1 within 10 s; its log:" >&2
    cat "$3" >&2
    exit 1
}

cat >"$OUT/bench.yaml" <<YAML
domain: bench
descriptors:
  - key: k1
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
  - key: k2
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
  - key: k3
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
YAML

declare -A port server_pid
for target in $TARGETS; do
    case "$target" in
    floor)
        port[floor]="$(free_port)"
        "$bin/sluicegate-floor" --grpc "127.0.0.1:${port[floor]}" 2>"$OUT/floor.log" &
        pids+=("$!")
        server_pid[floor]="$!"
        wait_port "${port[floor]}" sluicegate-floor "$OUT/floor.log"
        ;;
    engine)
        port[engine]="$(free_port)"
        "$bin/sluicegate-floor" --grpc "127.0.0.1:${port[engine]}" --config "$OUT/bench.yaml" \
            2>"$OUT/engine.log" &
        pids+=("$!")
        server_pid[engine]="$!"
        wait_port "${port[engine]}" "sluicegate-floor --config" "$OUT/engine.log"
        ;;
    process)
        port[process]="$(free_port)"
        "$bin/sluicegate-server" --config "$OUT/bench.yaml" --log warn \
            --grpc "127.0.0.1:${port[process]}" --http "127.0.0.1:$(free_port)" \
            2>"$OUT/process.log" &
        pids+=("$!")
        server_pid[process]="$!"
        wait_port "${port[process]}" sluicegate-server "$OUT/process.log"
        ;;
    floorbase)
        [ -x "${FLOOR_BASELINE_BIN:-}" ] || { echo "the floorbase target needs FLOOR_BASELINE_BIN, a sluicegate-floor binary" >&2; exit 1; }
        port[floorbase]="$(free_port)"
        "$FLOOR_BASELINE_BIN" --grpc "127.0.0.1:${port[floorbase]}" 2>"$OUT/floorbase.log" &
        pids+=("$!")
        server_pid[floorbase]="$!"
        wait_port "${port[floorbase]}" "$FLOOR_BASELINE_BIN" "$OUT/floorbase.log"
        ;;
    baseline)
        [ -x "${BASELINE_BIN:-}" ] || { echo "the baseline target needs BASELINE_BIN, a sluicegate-server binary" >&2; exit 1; }
        port[baseline]="$(free_port)"
        "$BASELINE_BIN" --config "$OUT/bench.yaml" --log warn \
            --grpc "127.0.0.1:${port[baseline]}" --http "127.0.0.1:$(free_port)" \
            2>"$OUT/baseline.log" &
        pids+=("$!")
        server_pid[baseline]="$!"
        wait_port "${port[baseline]}" "$BASELINE_BIN" "$OUT/baseline.log"
        ;;
    redis)
        redis_port="$(free_port)"
        redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
            --daemonize no --logfile "$OUT/redis-server.log" &
        pids+=("$!")
        wait_port "$redis_port" redis-server "$OUT/redis-server.log"
        port[redis]="$(free_port)"
        "$bin/sluicegate-server" --config "$OUT/bench.yaml" --log warn \
            --redis "redis://127.0.0.1:$redis_port/" \
            --grpc "127.0.0.1:${port[redis]}" --http "127.0.0.1:$(free_port)" \
            2>"$OUT/redis.log" &
        pids+=("$!")
        server_pid[redis]="$!"
        wait_port "${port[redis]}" "sluicegate-server --redis" "$OUT/redis.log"
        ;;
    *) echo "unknown target $target (floor, floorbase, engine, process, redis, baseline)" >&2; exit 1 ;;
    esac
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs" >&2
echo "raw results: $results" >&2
for pass in $PASSES; do
    for descriptors in $DESCRIPTORS; do
        for keys in $KEYS; do
            for round in $(seq "$ROUNDS"); do
                for target in $TARGETS; do
                    args=(--target "127.0.0.1:${port[$target]}" --mode "$pass"
                        --connections "$CONNECTIONS"
                        --descriptors "$descriptors" --keys "$keys"
                        --duration "$DURATION" --warmup "$WARMUP" --threads "$LOAD_THREADS"
                        --seed "$round$descriptors$keys"
                        --label "$pass/$target/$descriptors/$keys/$round")
                    if [ "$pass" = open ]; then
                        rate="$OPEN_RATE"
                        [ "$target" = redis ] && rate="$REDIS_OPEN_RATE"
                        # Open loop: enough slots that the in-flight cap never paces it.
                        args+=(--rate "$rate" --concurrency 4096)
                    else
                        args+=(--concurrency "$CONCURRENCY")
                    fi
                    before="$(cpu_ticks "${server_pid[$target]}")"
                    line="$(timeout $((${DURATION%.*} + ${WARMUP%.*} + 30)) "$bin/sluicegate-load" "${args[@]}")"
                    after="$(cpu_ticks "${server_pid[$target]}")"
                    line="${line%\}},\"server_cpu_us\":$(((after - before) * 1000000 / hz))}"
                    echo "$line" >>"$results"
                    echo "$line" >&2
                done
            done
        done
    done
done

# Each process's resident memory after the runs, for the record.
for pid in "${pids[@]}"; do
    echo "rss after the runs: $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60)... $(sed -n 's/^VmRSS: *//p' "/proc/$pid/status")" >&2
done

python3 - "$results" <<'PY'
import json, statistics, sys
from collections import defaultdict

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
by = defaultdict(list)  # (pass, target, descriptors, keys) -> runs in round order
for r in runs:
    p, target, d, k, rnd = r["label"].split("/")
    by[(p, target, int(d), int(k))].append((int(rnd), r))

def cpu(r):
    return r.get("server_cpu_us", 0) / r["sent"] if r.get("sent") else 0.0

def med(xs):
    return statistics.median(xs) if xs else float("nan")

for p in dict.fromkeys(k[0] for k in by):
    print(f"\n#### {p} loop" + (" (at max)" if p == "closed" else " (fixed rate; latency from the scheduled time)"))
    print()
    print("| workload | target | decisions/s | requests/s | p50 µs | p99 µs | p99.9 µs | errors | over limit | CPU µs/req | × floor decisions/s | × floor p99 | × floor CPU/req |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    workloads = sorted({(k[2], k[3]) for k in by if k[0] == p})
    targets = [t for t in ("floor", "floorbase", "engine", "baseline", "process", "redis") if any(k[0] == p and k[1] == t for k in by)]
    for d, k in workloads:
        floor = dict(by.get((p, "floor", d, k), []))
        for t in targets:
            rs = dict(by.get((p, t, d, k), []))
            if not rs:
                continue
            vals = list(rs.values())
            row = [f"{d} desc, {k:,} keys", t,
                   f"{med([r['decisions_per_s'] for r in vals]):,.0f}",
                   f"{med([r['requests_per_s'] for r in vals]):,.0f}",
                   f"{med([r['p50_us'] for r in vals]):,.0f}",
                   f"{med([r['p99_us'] for r in vals]):,.0f}",
                   f"{med([r['p999_us'] for r in vals]):,.0f}",
                   str(sum(r['errors'] for r in vals)),
                   str(sum(r['over_limit'] for r in vals)),
                   f"{med([cpu(r) for r in vals]):.1f}"]
            same = [rnd for rnd in rs if rnd in floor]
            # The floor's rate must be the same for a ratio (open loop: redis runs slower).
            same = [n for n in same if rs[n].get("rate") == floor[n].get("rate")]
            if t != "floor" and same:
                tp = med([rs[n]["decisions_per_s"] / floor[n]["decisions_per_s"] for n in same if floor[n]["decisions_per_s"]])
                lat = med([rs[n]["p99_us"] / floor[n]["p99_us"] for n in same if floor[n]["p99_us"]])
                cp = med([cpu(rs[n]) / cpu(floor[n]) for n in same if cpu(floor[n])])
                row += [f"{tp:.2f}", f"{lat:.2f}", f"{cp:.2f}"]
            else:
                row += ["", "", ""]
            print("| " + " | ".join(row) + " |")
PY
