#!/usr/bin/env python3
"""Regenerate the tables of BENCHMARKS.md from the benches' output, so that no figure is typed
by hand.

    python3 scripts/bench_report.py --list              # the suites, and what each runs
    python3 scripts/bench_report.py --run keys direct   # run suites, keep their output, render
    python3 scripts/bench_report.py                     # render from the output kept so far

BENCHMARKS.md is hand-written prose around generated blocks:

    <!-- table:NAME -->
    ...generated...
    <!-- /table:NAME -->

`--run SUITE` runs the suite's command, keeps what it printed (or, for a criterion suite, the
groups it measured, from `<target>/criterion`) in `<target>/bench-report/SUITE.json` with the
date, the machine (CPU model and cores, from /proc/cpuinfo) and the command, and then every
block that suite fills is rewritten: its tables, then a line naming the machine, the date and
the command. Blocks of suites not run here keep their text as it is (figures carried over
from another machine say which, and when, in their own line). The headline table
(`<!-- table:headline -->`) is rebuilt row by row: a row whose suite has kept output is
computed again, any other row is kept.

A suite that prints Markdown may also print `headline: ID: RATIO | FLOOR` lines: they feed the
headline row ID and are left out of the block. Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "BENCHMARKS.md"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
KEPT = TARGET / "bench-report"
CRITERION = TARGET / "criterion"
# Short criterion runs: the benches share their machine with builds, and the ratios that the
# report quotes come from rows measured minutes apart either way.
CRITERION_ARGS = ["--warm-up-time", "1", "--measurement-time", "3"]
BASELINE = "governor"


def cargo_bench(name, *extra):
    return ["cargo", "bench", "--bench", name, *extra]


PYTHON = os.environ.get("PYTHON", "python3")

# name: (command, kind, blocks). `criterion` suites fill one block per group (the block's
# name is the group's); `markdown` suites fill the one block named after the suite.
SUITES = {
    "direct": (cargo_bench("direct", "--", *CRITERION_ARGS), "criterion", ["direct/"]),
    "keyed": (cargo_bench("keyed", "--", *CRITERION_ARGS), "criterion", ["keyed/"]),
    "threads": (cargo_bench("threads", "--", *CRITERION_ARGS), "criterion", ["threads/"]),
    "dispatch": (cargo_bench("dispatch", "--", *CRITERION_ARGS), "criterion", ["dispatch/"]),
    "keys": (cargo_bench("string_keys"), "markdown", ["keys"]),
    "redis": (["cargo", "bench", "--features", "redis", "--bench", "redis"], "markdown", ["redis"]),
    "http": (["bash", "scripts/http_bench.sh"], "markdown", ["http"]),
    # Needs `npm install` in bindings/node first (the native module and the libraries compared).
    "node-keyed": (["node", "bindings/node/bench/keyed.js"], "markdown", ["node-keyed"]),
    # Needs the package and `limits` installed for $PYTHON (default python3).
    "python-keyed": (["python3", "bindings/python/bench/keyed.py", "--lengths", "15"], "markdown", ["python-keyed"]),
}

# The headline table: (id, what, against, suite). Criterion-fed rows are computed by
# `criterion_headline`, the others come from their suite's `headline:` lines; a row whose
# suite is None has no bench here (it is kept as it stands in the report).
HEADLINES = [
    ("u64-present", "`KeyedLimiter<u64>` check, 1M keys present", "governor 0.10, keyed", "keys"),
    ("u64-insert", "`KeyedLimiter<u64>` first check of a new key, growing to 1M", "governor 0.10, keyed", "keys"),
    ("string-present", "`KeyedLimiter<String>` check, 1M keys present, six kinds of text key (7–40 B)",
     "governor 0.10, keyed", "keys"),
    ("string-insert", "`KeyedLimiter<String>` first check of a new key, growing to 1M, six kinds",
     "governor 0.10, keyed", "keys"),
    ("gcra-direct-tsc", "`Limiter<Gcra>` check, allow path, TSC clock", "governor 0.10, direct", "direct"),
    ("deny-coarse", "deny path, coarse clock: `TokenBucket`, `SlidingWindow`", "`Gcra`'s deny path", "direct"),
    ("node-keyed-1000000-b36", "Node `KeyedLimiter.check`, 1M `user:<base36>` keys (13–14 chars)",
     "rate-limiter-flexible 11, `consume`", "node-keyed"),
    ("python-keyed-1000000-15", "Python `KeyedLimiter.check`, 1M keys present, 15 chars",
     "the `dict.get` floor; `limits` 5.8, fixed window", "python-keyed"),
    ("service-memory", "sluicegate-server in memory, gRPC (`service` build)", "Limitador (2981b2b), in memory", None),
    ("service-redis", "sluicegate-server on Redis with the module", "Limitador (2981b2b) on Redis", None),
    ("redis-batching", "K-batching on Redis with the module, 256 tasks", "a bare `EVALSHA` returning 1", None),
]

HEADLINE_LINE = re.compile(r"^headline: ([\w-]+): (.*?) \| (.*)$")
BLOCK = re.compile(r"<!-- table:(?P<name>[\w/.-]+) -->\n(?P<body>.*?)<!-- /table:(?P=name) -->", re.S)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", nargs="+", metavar="SUITE", default=[], help="run these suites first")
    parser.add_argument("--list", action="store_true", help="list the suites and their commands")
    args = parser.parse_args()
    if args.list:
        for name, (command, kind, _) in SUITES.items():
            print(f"{name:14} {kind:10} {' '.join(command)}")
        return
    unknown = [s for s in args.run if s not in SUITES]
    if unknown:
        parser.error(f"unknown suite(s) {', '.join(unknown)}; --list shows them")
    for suite in args.run:
        run_suite(suite)
    render()


# ---- Running a suite ----------------------------------------------------------------------


def run_suite(suite):
    command, kind, prefixes = SUITES[suite]
    print("+", " ".join(command), file=sys.stderr, flush=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    # `python3` runs as $PYTHON (a virtualenv with the package), though the report names it so.
    argv = [PYTHON if part == "python3" else part for part in command]
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        sys.exit(f"bench_report: `{' '.join(command)}` failed (exit {done.returncode}); nothing kept")
    kept = {
        "suite": suite,
        "command": " ".join(command),
        "date": f"{started:%Y-%m-%d}",
        "machine": machine(),
    }
    if kind == "criterion":
        kept["results"] = read_criterion(prefixes, started.timestamp())
        if not kept["results"]:
            sys.exit(f"bench_report: {suite} wrote no criterion results under {CRITERION}")
    else:
        kept["output"] = done.stdout
    KEPT.mkdir(parents=True, exist_ok=True)
    write_atomically(KEPT / f"{suite}.json", json.dumps(kept, indent=1))


def machine():
    """The CPU model and the number of cores the benches could use."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def read_criterion(prefixes, since):
    """The results of the groups under `prefixes` written since `since`, in measured order."""
    results = []
    for meta_path in CRITERION.glob("**/new/benchmark.json"):
        estimates_path = meta_path.with_name("estimates.json")
        if not estimates_path.exists() or estimates_path.stat().st_mtime < since:
            continue
        meta = json.loads(meta_path.read_text())
        if not any(meta["group_id"].startswith(p) for p in prefixes):
            continue
        estimates = json.loads(estimates_path.read_text())
        per_iteration = (meta.get("throughput") or {}).get("Elements") or 1
        median = estimates["median"]
        results.append(
            {
                "group": meta["group_id"],
                "function": "/".join(p for p in (meta.get("function_id"), meta.get("value_str")) if p),
                "function_id": meta.get("function_id"),
                "parameter": meta.get("value_str"),
                "median": median["point_estimate"] / per_iteration,
                "low": median["confidence_interval"]["lower_bound"] / per_iteration,
                "high": median["confidence_interval"]["upper_bound"] / per_iteration,
                "measured": estimates_path.stat().st_mtime,
            }
        )
    results.sort(key=lambda r: r["measured"])
    return results


# ---- Rendering ----------------------------------------------------------------------------


def render():
    text = REPORT.read_text()
    kept = {path.stem: json.loads(path.read_text()) for path in KEPT.glob("*.json")}
    blocks = {}
    headlines = {}
    for suite, data in kept.items():
        if suite not in SUITES:
            continue
        for name, body in suite_blocks(suite, data).items():
            blocks[name] = body + "\n\n" + provenance(data)
        headlines.update(suite_headlines(suite, data))
    names = {m.group("name") for m in BLOCK.finditer(text)}
    missing = sorted(set(blocks) - names)
    if missing:
        print(f"bench_report: no block in {REPORT.name} for {', '.join(missing)}", file=sys.stderr)

    def replace(match):
        name = match.group("name")
        if name == "headline":
            body = headline_table(match.group("body"), headlines)
        elif name in blocks:
            body = blocks[name]
        else:
            return match.group(0)
        return f"<!-- table:{name} -->\n{body.strip()}\n<!-- /table:{name} -->"

    write_atomically(REPORT, BLOCK.sub(replace, text))
    print(f"bench_report: wrote {REPORT} ({len(blocks)} blocks from {', '.join(sorted(kept)) or 'nothing'})",
          file=sys.stderr)


def provenance(data):
    return f"_{data['machine']}; {data['date']}; `{data['command']}`._"


def suite_blocks(suite, data):
    """{block name: Markdown} for one suite's kept output."""
    if "results" in data:
        groups = {}
        for r in data["results"]:
            groups.setdefault(r["group"], []).append(r)
        return {group: "\n".join(criterion_table(rows)) for group, rows in groups.items()}
    lines = [demoted(line) for line in data["output"].splitlines() if not HEADLINE_LINE.match(line)]
    return {SUITES[suite][2][0]: "\n".join(lines).strip()}


def demoted(line):
    """A suite's own heading as a bold line: its block sits inside a section of the report."""
    match = re.match(r"#+ (.*)", line)
    return f"**{match.group(1)}**" if match else line


def criterion_table(rows):
    # A parameterised row (`gcra/4`, say 4 threads) is compared with `governor/4`.
    baselines = {r["parameter"]: r for r in rows if r["function_id"] == BASELINE}
    out = [
        f"| function | median ns/check | {BASELINE} ns/check | ratio | checks/s | median 95% CI (ns) |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        baseline = baselines.get(r["parameter"])
        if baseline is None or r is baseline:
            theirs, ratio = "—", "—"
        else:
            theirs, ratio = ns(baseline["median"]), f"{r['median'] / baseline['median']:.2f}"
        out.append(
            f"| {r['function']} | {ns(r['median'])} | {theirs} | {ratio} | "
            f"{per_second(r['median'])} | {ns(r['low'])} – {ns(r['high'])} |"
        )
    return out


def suite_headlines(suite, data):
    """{headline id: (ratio, floor, data)} that this suite's output gives."""
    found = {}
    if "output" in data:
        for line in data["output"].splitlines():
            match = HEADLINE_LINE.match(line)
            if match:
                found[match.group(1)] = (match.group(2), match.group(3), data)
    else:
        found.update(criterion_headline(data))
    return found


def criterion_headline(data):
    medians = {(r["group"], r["function"]): r["median"] for r in data["results"]}
    found = {}
    gcra, governor = medians.get(("direct/allow/tsc", "gcra")), medians.get(("direct/allow/tsc", "governor"))
    if gcra and governor:
        found["gcra-direct-tsc"] = (f"{gcra / governor:.2f}× ({ns(gcra)} ns against {ns(governor)})", "—", data)
    deny = "direct/deny/coarse"
    gcra = medians.get((deny, "gcra"))
    bucket, window = medians.get((deny, "token_bucket")), medians.get((deny, "sliding_window"))
    if gcra and bucket and window:
        found["deny-coarse"] = (
            f"{bucket / gcra:.2f}× and {window / gcra:.2f}× ({ns(bucket)}, {ns(window)} ns against {ns(gcra)})",
            "—",
            data,
        )
    return found


def headline_table(existing, headlines):
    """The headline table: rows computed from kept output, the others kept as they were."""
    kept_rows = {}
    for line in existing.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 7:
            kept_rows[cells[0]] = line.strip()
    out = [
        "| what | against | ratio | floor | machine | date | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for hid, what, against, suite in HEADLINES:
        if suite is not None and hid in headlines:
            ratio, floor, data = (*map(times_sign, headlines[hid][:2]), headlines[hid][2])
            out.append(f"| {what} | {against} | {ratio} | {floor} | {data['machine']} | {data['date']} | "
                       f"`python3 scripts/bench_report.py --run {suite}` |")
        elif what in kept_rows:
            out.append(kept_rows[what])
    return "\n".join(out)


def times_sign(text):
    """`0.45x` as `0.45×`, as the report writes ratios."""
    return re.sub(r"(\d)x\b", "\\1×", text)


def ns(value):
    """Three significant figures or so: 7.77, 35.2, 216."""
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def per_second(median_ns):
    rate = 1e9 / median_ns
    return f"{rate / 1e6:.1f} M" if rate >= 1e6 else f"{rate / 1e3:.1f} k" if rate >= 1e3 else f"{rate:.0f}"


def write_atomically(path, text):
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)


if __name__ == "__main__":
    main()
