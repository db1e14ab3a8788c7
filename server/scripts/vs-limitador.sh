#!/usr/bin/env bash
# sluicegate-server against Limitador's server (Kuadrant/limitador), side by side
# (BENCHMARKS.md, "Issue 33"): both answer Envoy RLS v3 on loopback, in memory and each on a
# redis-server of its own, on the same never-denying fixed-window limits (LIMIT per second
# per value), driven by sluicegate-load in a closed loop (CONNECTIONS h2 connections,
# CONCURRENCY requests in flight: 4 x 16 by default, h2load's shape) with the targets
# alternated in every round. Per run it records requests/s, the server's CPU (utime+stime from
# /proc) and, on Redis, redis-server's CPU and its commands (INFO commandstats), each per
# request; then prints medians over the rounds and the per-round ratios sluicegate / Limitador
# (median in bold). Every process it starts is stopped by PID.
#
#   LIMITADOR_BIN=/work/limitador/target/release/limitador-server \
#     bash server/scripts/vs-limitador.sh
#
# Build Limitador first with server/scripts/build-limitador.sh (outside this repository).
# Environment: LIMITADOR_BIN (required), BIN_DIR (prebuilt sluicegate-server and
# sluicegate-load; else built with PROFILE, `service` by default), ROUNDS (3), DURATION (4 s
# measured per run), WARMUP (1 s), CONCURRENCY (64), CONNECTIONS (4), LOAD_THREADS (2),
# WORKLOADS ("1:1 1:1000 1:1000000 3:1000": descriptors:values, 1 value is one hot key),
# BACKENDS ("memory redis"), LIMIT (100000000), SLUICEGATE_FLAGS (more flags for
# sluicegate-server, e.g. "--workers 1"), REDIS_MODULE (the sluicegate Redis module,
# libsluicegate_redis.so: sluicegate's redis-server loads it and sluicegate-server runs with
# --redis-module; Limitador's redis-server does not), OUT (raw JSON lines and logs), JOBS.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-4}"
WARMUP="${WARMUP:-1}"
CONCURRENCY="${CONCURRENCY:-64}"
CONNECTIONS="${CONNECTIONS:-4}"
LOAD_THREADS="${LOAD_THREADS:-2}"
WORKLOADS="${WORKLOADS:-1:1 1:1000 1:1000000 3:1000}"
BACKENDS="${BACKENDS:-memory redis}"
LIMIT="${LIMIT:-100000000}"
PROFILE="${PROFILE:-service}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"

[ -x "${LIMITADOR_BIN:-}" ] || { echo "set LIMITADOR_BIN to limitador-server (server/scripts/build-limitador.sh builds it)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed for the tables" >&2; exit 1; }
case " $BACKENDS " in
*" redis "*) command -v redis-server >/dev/null || { echo "redis-server is needed (apt-get install redis-server)" >&2; exit 1; } ;;
esac

if [ -n "${BIN_DIR:-}" ]; then
    bin="$BIN_DIR"
else
    cargo build --profile "$PROFILE" -p sluicegate-server --features bench --bins ${JOBS:+-j "$JOBS"}
    bin="$CARGO_TARGET_DIR/$PROFILE"
fi

OUT="${OUT:-$(mktemp -d -t sluicegate-vs-limitador.XXXXXX)}"
mkdir -p "$OUT"
results="$OUT/results.jsonl"
: >"$results"

pids=()
stop_all() {
    [ "${#pids[@]}" -gt 0 ] || return 0
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
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

# The same limits both ways: a fixed window of one second per value of k1, k2, k3.
cat >"$OUT/sluicegate.yaml" <<YAML
domain: bench
descriptors:
  - key: k1
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
  - key: k2
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
  - key: k3
    rate_limit: { unit: second, requests_per_unit: $LIMIT }
YAML
# Limitador: a limit per descriptor the workload sends (a limit naming descriptors[i] fails
# a request that has no descriptor i), so one limits file per descriptor count.
for n in 1 2 3; do
    : >"$OUT/limitador-$n.yaml"
    for i in $(seq 0 $((n - 1))); do
        cat >>"$OUT/limitador-$n.yaml" <<YAML
- namespace: bench
  max_value: $LIMIT
  seconds: 1
  conditions: []
  variables: ["descriptors[$i].k$((i + 1))"]
YAML
    done
done

declare -A port server_pid redis_pid redis_port
start_redis() { # name [more redis-server arguments]
    local p name="$1"
    shift
    p="$(free_port)"
    redis-server --bind 127.0.0.1 --port "$p" --save '' --appendonly no --daemonize no \
        --logfile "$OUT/redis-$name.log" "$@" &
    pids+=("$!")
    redis_pid[$name]="$!"
    redis_port[$name]="$p"
    wait_port "$p" "redis-server for $name" "$OUT/redis-$name.log"
}

targets=()
for backend in $BACKENDS; do
    for server in sluicegate limitador; do targets+=("$server-$backend"); done
done

# Starts every target (each Redis-backed one on a fresh redis-server of its own) for a
# workload of $1 descriptors; stop_targets stops them.
start_targets() {
    for t in "${targets[@]}"; do
        local server="${t%%-*}" backend="${t##*-}"
        port[$t]="$(free_port)"
        local http
        http="$(free_port)"
        case "$server/$backend" in
        sluicegate/memory)
            "$bin/sluicegate-server" --config "$OUT/sluicegate.yaml" --log warn ${SLUICEGATE_FLAGS:-} \
                --grpc "127.0.0.1:${port[$t]}" --http "127.0.0.1:$http" 2>>"$OUT/$t.log" & ;;
        sluicegate/redis)
            if [ -n "${REDIS_MODULE:-}" ]; then
                start_redis "$t" --loadmodule "$(realpath "$REDIS_MODULE")"
            else
                start_redis "$t"
            fi
            "$bin/sluicegate-server" --config "$OUT/sluicegate.yaml" --log warn ${SLUICEGATE_FLAGS:-} \
                ${REDIS_MODULE:+--redis-module} \
                --redis "redis://127.0.0.1:${redis_port[$t]}/" \
                --grpc "127.0.0.1:${port[$t]}" --http "127.0.0.1:$http" 2>>"$OUT/$t.log" & ;;
        limitador/memory)
            "$LIMITADOR_BIN" --rls-ip 127.0.0.1 --rls-port "${port[$t]}" --http-ip 127.0.0.1 \
                --http-port "$http" "$OUT/limitador-$1.yaml" memory 2>>"$OUT/$t.log" >&2 & ;;
        limitador/redis)
            start_redis "$t"
            "$LIMITADOR_BIN" --rls-ip 127.0.0.1 --rls-port "${port[$t]}" --http-ip 127.0.0.1 \
                --http-port "$http" "$OUT/limitador-$1.yaml" redis \
                "redis://127.0.0.1:${redis_port[$t]}/" 2>>"$OUT/$t.log" >&2 & ;;
        esac
        pids+=("$!")
        server_pid[$t]="$!"
        wait_port "${port[$t]}" "$t" "$OUT/$t.log"
    done
}
stop_targets() {
    local pid
    for t in "${targets[@]}"; do
        for pid in "${server_pid[$t]}" "${redis_pid[$t]:-}"; do
            [ -n "$pid" ] || continue
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            # Reaped: forget it, so that the exit trap never signals a reused PID.
            local kept=()
            for p in "${pids[@]}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
            pids=("${kept[@]}")
        done
        redis_pid[$t]=""
    done
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"
# Redis commands run so far (scripts' inner commands included), as "name=calls ...".
commands() { redis-cli -p "$1" INFO commandstats | sed -n 's/^cmdstat_\([a-z|.]*\):calls=\([0-9]*\).*/\1=\2/p' | tr '\n' ' '; }

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "raw results: $results" >&2
for workload in $WORKLOADS; do
    descriptors="${workload%%:*}"
    keys="${workload##*:}"
    start_targets "$descriptors"
    for round in $(seq "$ROUNDS"); do
        for t in "${targets[@]}"; do
            args=(--target "127.0.0.1:${port[$t]}" --mode closed
                --connections "$CONNECTIONS" --concurrency "$CONCURRENCY"
                --descriptors "$descriptors" --keys "$keys"
                --duration "$DURATION" --warmup "$WARMUP" --threads "$LOAD_THREADS"
                --seed "$round$descriptors$keys" --label "$t/$descriptors/$keys/$round")
            rp="${redis_pid[$t]:-}"
            before="$(cpu_ticks "${server_pid[$t]}")"
            rbefore=0
            cbefore=""
            if [ -n "$rp" ]; then
                rbefore="$(cpu_ticks "$rp")"
                cbefore="$(commands "${redis_port[$t]}")"
            fi
            line="$(timeout $((${DURATION%.*} + ${WARMUP%.*} + 30)) "$bin/sluicegate-load" "${args[@]}")"
            after="$(cpu_ticks "${server_pid[$t]}")"
            extra=",\"server_cpu_us\":$(((after - before) * 1000000 / hz)),\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\""
            if [ -n "$rp" ]; then
                rafter="$(cpu_ticks "$rp")"
                cafter="$(commands "${redis_port[$t]}")"
                extra+=",\"redis_cpu_us\":$(((rafter - rbefore) * 1000000 / hz)),\"commands_before\":\"$cbefore\",\"commands_after\":\"$cafter\""
            fi
            line="${line%\}}$extra}"
            echo "$line" >>"$results"
            echo "$line" >&2
        done
    done
    stop_targets
done

python3 - "$results" <<'PY'
import json, statistics, sys
from collections import defaultdict

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
by = defaultdict(dict)  # (target, descriptors, keys) -> {round: run}
for r in runs:
    t, d, k, rnd = r["label"].split("/")
    by[(t, int(d), int(k))][int(rnd)] = r

def per_req(r, field):
    return r.get(field, 0) / r["sent"] if r.get("sent") else float("nan")

def cmds(r):
    def parse(s):
        return {kv.split("=")[0]: int(kv.split("=")[1]) for kv in s.split()}
    a, b = parse(r.get("commands_after", "")), parse(r.get("commands_before", ""))
    # INFO commandstats itself is counted on the next read; leave it out.
    return sum(v - b.get(c, 0) for c, v in a.items() if c not in ("info",)) / r["sent"]

def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")

def ratios(a, b, f):
    same = [n for n in a if n in b]
    xs = [f(a[n]) / f(b[n]) for n in same if f(b[n])]
    return ", ".join(f"{x:.2f}" for x in xs) + (f"; **{med(xs):.2f}**" if xs else "")

workloads = sorted({(k[1], k[2]) for k in by}, key=lambda w: (w[0], w[1]))
for backend in ("memory", "redis"):
    if not any(k[0].endswith(backend) for k in by):
        continue
    print(f"\n#### {backend}\n")
    head = "| workload | target | requests/s | server CPU µs/req |"
    sep = "|---|---|--:|--:|"
    if backend == "redis":
        head += " Redis CPU µs/req | Redis commands/req |"
        sep += "--:|--:|"
    print(head + " errors |")
    print(sep + "--:|")
    for d, k in workloads:
        for server in ("sluicegate", "limitador"):
            rs = by.get((f"{server}-{backend}", d, k), {})
            if not rs:
                continue
            v = list(rs.values())
            row = [f"{d} desc, {k:,} values", server,
                   f"{med([r['requests_per_s'] for r in v]):,.0f}",
                   f"{med([per_req(r, 'server_cpu_us') for r in v]):.1f}"]
            if backend == "redis":
                row += [f"{med([per_req(r, 'redis_cpu_us') for r in v]):.2f}",
                        f"{med([cmds(r) for r in v]):.2f}"]
            row.append(str(sum(r["errors"] for r in v)))
            print("| " + " | ".join(row) + " |")
    print(f"\nsluicegate / Limitador, per round; median in bold ({backend}):\n")
    head = "| workload | requests/s | server CPU/req |"
    sep = "|---|---|---|"
    if backend == "redis":
        head += " Redis CPU/req | server + Redis CPU/req |"
        sep += "---|---|"
    print(head)
    print(sep)
    for d, k in workloads:
        a = by.get((f"sluicegate-{backend}", d, k), {})
        b = by.get((f"limitador-{backend}", d, k), {})
        row = [f"{d} desc, {k:,} values",
               ratios(a, b, lambda r: r["requests_per_s"]),
               ratios(a, b, lambda r: per_req(r, "server_cpu_us"))]
        if backend == "redis":
            row += [ratios(a, b, lambda r: per_req(r, "redis_cpu_us")),
                    ratios(a, b, lambda r: per_req(r, "server_cpu_us") + per_req(r, "redis_cpu_us"))]
        print("| " + " | ".join(row) + " |")
PY
