#!/usr/bin/env python3
"""Regenerate BENCHMARKS.md from criterion's results, so that no figure is typed by hand.

    python3 scripts/bench_report.py                  # report the results already in target/criterion
    python3 scripts/bench_report.py --run            # run `cargo bench` first (every bench target)
    python3 scripts/bench_report.py --run -- --bench direct   # extra args after `--` go to cargo bench
    python3 scripts/bench_report.py --redis --http   # also the Redis and HTTP suites (not criterion)

Reads every `<criterion dir>/**/new/benchmark.json` (the real group and function names:
criterion turns `/` into `_` in directory names) with the `estimates.json` beside it (times
per iteration in ns), and writes one table per group: the median ns per check, the median of
the group's `governor` row, their ratio, and checks per second. Groups sharing a first path
segment (`direct/allow/tsc`, `direct/deny/tsc`) go under one `## direct` heading. Groups and
rows are listed in the order they were measured, i.e. the order of the bench source after a
full run. A parameterised benchmark (`gcra/4`) is compared with `governor` at the same parameter.

A bench that does several checks per iteration (say, a multi-thread `iter_custom` with one
check per thread per iteration) declares it with `Throughput::Elements(n)`; times are then
divided by `n`, so "ns per check" is wall time per check and "checks/s" the aggregate rate.

The Redis bench (`cargo bench --features redis --bench redis`) and the HTTP bench
(`scripts/http_bench.sh`) print Markdown tables of their own; `--redis` and `--http` run them and
keep their output in `<target>/bench-report/`, and every report embeds the latest output found
there under `## redis` and `## http`.

Everything between `<!-- commentary:start -->` and `<!-- commentary:end -->` in the existing
BENCHMARKS.md is hand-written and kept verbatim. Standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "python3 scripts/bench_report.py --run"
BASELINE = "governor"
COMMENTARY_START = "<!-- commentary:start -->"
COMMENTARY_END = "<!-- commentary:end -->"
# Everything from this marker to the end of the existing report (hand-written sections of
# measurements this script does not run) is kept as it is, after the generated tables.
KEPT_START = "<!-- kept:start -->"
DEFAULT_COMMENTARY = (
    f"{COMMENTARY_START}\n"
    "_Hand-written commentary goes here: everything between the two commentary markers is "
    "kept when the report is regenerated; everything else is rewritten._\n"
    f"{COMMENTARY_END}"
)


def main():
    args, cargo_args = parse_args()
    if args.run:
        command = ["cargo", "bench", *cargo_args]
        print("+", " ".join(command), file=sys.stderr, flush=True)
        status = subprocess.run(command, cwd=ROOT).returncode
        if status != 0:
            sys.exit(f"bench_report: `{' '.join(command)}` failed (exit {status}); report not written")
    for suite in ("redis", "http"):
        if getattr(args, suite):
            run_markdown_suite(suite, args.extra_dir)
    results = read_results(args.criterion_dir)
    if not results:
        sys.exit(f"bench_report: no criterion results under {args.criterion_dir}; run with --run")
    output = args.output
    commentary = read_commentary(output)
    kept = read_kept(output)
    report = render(results, commentary, read_markdown_suites(args.extra_dir))
    write_atomically(output, report + ("\n" + kept if kept else ""))
    groups = len({r["group"] for r in results})
    print(f"bench_report: wrote {output} ({len(results)} benchmarks in {groups} groups)", file=sys.stderr)


def parse_args():
    argv = sys.argv[1:]
    cargo_args = []
    if "--" in argv:
        split = argv.index("--")
        argv, cargo_args = argv[:split], argv[split + 1 :]
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    parser = argparse.ArgumentParser(
        description="Regenerate BENCHMARKS.md from criterion's results.",
        epilog="Arguments after `--` are passed to `cargo bench` (with --run).",
    )
    parser.add_argument("--run", action="store_true", help="run `cargo bench` before reporting")
    parser.add_argument(
        "--criterion-dir", type=Path, default=target / "criterion", help="default: target/criterion"
    )
    parser.add_argument("--redis", action="store_true", help="run the Redis bench (needs redis-server)")
    parser.add_argument("--http", action="store_true", help="run the HTTP bench (needs wrk)")
    parser.add_argument(
        "--extra-dir", type=Path, default=target / "bench-report", help="default: target/bench-report"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md", help="default: BENCHMARKS.md")
    args = parser.parse_args(argv)
    if cargo_args and not args.run:
        parser.error("arguments after `--` are for `cargo bench`, which only --run runs")
    return args, cargo_args


# ---- The suites that print their own Markdown --------------------------------------------

MARKDOWN_SUITES = {
    "redis": ["cargo", "bench", "--features", "redis", "--bench", "redis"],
    "http": ["bash", "scripts/http_bench.sh"],
}


def run_markdown_suite(suite, extra_dir):
    command = MARKDOWN_SUITES[suite]
    print("+", " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_report: `{' '.join(command)}` failed (exit {done.returncode}); report not written")
    extra_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(extra_dir / f"{suite}.md", done.stdout)


def read_markdown_suites(extra_dir):
    """[(suite, markdown)] for each suite whose output was kept."""
    found = []
    for suite in MARKDOWN_SUITES:
        path = extra_dir / f"{suite}.md"
        if path.exists():
            found.append((suite, path.read_text().strip()))
    return found


# ---- Reading criterion's results ----------------------------------------------------------


def read_results(criterion_dir):
    """One dict per benchmark, in the order they were measured."""
    results = []
    # `new/` holds the latest run; `base/` (the previous one) and `change/` are skipped.
    for meta_path in criterion_dir.glob("**/new/benchmark.json"):
        estimates_path = meta_path.with_name("estimates.json")
        if not estimates_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        estimates = json.loads(estimates_path.read_text())
        per_iteration = (meta.get("throughput") or {}).get("Elements") or 1
        median = estimates["median"]
        interval = median["confidence_interval"]
        results.append(
            {
                "group": meta["group_id"],
                "function": function_name(meta),
                "function_id": meta.get("function_id"),
                "parameter": meta.get("value_str"),
                "median": median["point_estimate"] / per_iteration,
                "low": interval["lower_bound"] / per_iteration,
                "high": interval["upper_bound"] / per_iteration,
                "measured": estimates_path.stat().st_mtime,
            }
        )
    results.sort(key=lambda r: r["measured"])
    return results


def function_name(meta):
    """`function`, `function/parameter` or `parameter`, as criterion names the benchmark."""
    parts = [p for p in (meta.get("function_id"), meta.get("value_str")) if p]
    return "/".join(parts) or meta["full_id"]


def read_commentary(path):
    """The hand-written block of the existing report, markers included."""
    if not path.exists():
        return DEFAULT_COMMENTARY
    text = path.read_text()
    start, end = text.find(COMMENTARY_START), text.find(COMMENTARY_END)
    if start == -1 or end == -1 or end < start:
        if COMMENTARY_START in text or COMMENTARY_END in text:
            sys.exit(f"bench_report: {path} has an unpaired commentary marker; fix it by hand")
        return DEFAULT_COMMENTARY
    return text[start : end + len(COMMENTARY_END)]


def read_kept(path):
    """The existing report's hand-written sections: from the kept marker to the end."""
    if not path.exists():
        return ""
    text = path.read_text()
    start = text.find(KEPT_START)
    return text[start:] if start != -1 else ""


# ---- Machine ------------------------------------------------------------------------------


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def rustc_version():
    try:
        out = subprocess.run(["rustc", "--version"], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---- Rendering ----------------------------------------------------------------------------


def render(results, commentary, markdown_suites):
    measured = datetime.datetime.fromtimestamp(max(r["measured"] for r in results), datetime.timezone.utc)
    lines = [
        "# Benchmarks",
        "",
        "<!-- Generated by scripts/bench_report.py from criterion's results: edit only the "
        "commentary block, the rest is rewritten. -->",
        "",
        commentary,
        "",
        "## Machine",
        "",
        f"- CPU: {cpu_model()}",
        f"- Cores: {os.cpu_count()}",
        f"- Compiler: {rustc_version()}",
        f"- Date: {measured:%Y-%m-%d} (newest result written {measured:%H:%M} UTC)",
        f"- Regenerate: `{REGENERATE}` (`cargo bench`, then this report; "
        "`python3 scripts/bench_report.py` alone reformats the last results)",
        "",
        "Times are criterion's median per check, with its 95% confidence interval; "
        f"the ratio is ours over `{BASELINE}`'s median in the same group (below 1: faster).",
    ]
    for prefix, groups in by_prefix(results):
        lines += ["", f"## {prefix}"]
        for group, rows in groups:
            lines += ["", f"### `{group}`", ""] + table(rows)
    for suite, markdown in markdown_suites:
        lines += ["", f"## {suite}", "", markdown]
    return "\n".join(lines) + "\n"


def by_prefix(results):
    """[(prefix, [(group, rows)])], each list in order of first measurement."""
    prefixes = {}
    for r in results:
        groups = prefixes.setdefault(r["group"].split("/", 1)[0], {})
        groups.setdefault(r["group"], []).append(r)
    return [(prefix, list(groups.items())) for prefix, groups in prefixes.items()]


def table(rows):
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
