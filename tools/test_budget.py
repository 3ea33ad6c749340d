"""Where the test suite's time goes: the slowest tests (setup / call / teardown), per file and per
package, from pytest's `--durations` report.

    python3 tools/test_budget.py --out=/tmp/budget tests/cades tests/pde   # run pytest per path
    python3 tools/test_budget.py --out=/tmp/budget --log=pytest.log        # read a saved report

With paths, each path runs in its own `python3 -m pytest -q --durations=0 --durations-min=0`
(sequentially, in this process's environment) and its CPU time (user + system of pytest and
every process it waited for: subprocess tests, notebook kernels) is recorded beside the wall
time. CPU time is what adds up to the suite's wall time on idle cores; wall time on a shared
machine is not. With `--log`, a file holding pytest's output of a `--durations=0` run is read
instead (no CPU figure). With `--cpu_log`, the record of a run with `--cpu_log=FILE`
(tests/cpu_account.py: CPU seconds of every test phase, its own process and the
subprocesses it waited for, and of every pytest process) is read too, alone or with `--log`:
a test's CPU is what it costs a CPU-bound suite, whatever else ran beside it. Where the
tests used JAX, the record also splits their own CPU into JAX's tracing, lowering and XLA
compiles, counts the programs compiled for single operations called outside jit, and names
the call sites that cost most (tests/cpu_account.JaxAccount); the tables show them.

    python3 -m pytest -n auto --dist loadfile --durations=0 --cpu_log=/tmp/cpu.json > pytest.log
    python3 tools/test_budget.py --out=/tmp/budget --log=pytest.log --cpu_log=/tmp/cpu.json

Writes `<out>/budget.json` and `<out>/budget.md`, and prints the markdown. A module
fixture's cost shows as the setup of the first test that uses it.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
from lib.common import workdir as wd  # noqa: E402
from tests import cpu_account, file_order  # noqa: E402  (the records' formats, shared with tests/)

PHASES = ("setup", "call", "teardown")
# one row of pytest's "slowest durations" section: "12.34s call     tests/a/test_b.py::test_c"
ROW = re.compile(r"^\s*(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S.*?)\s*$")
HEADER = re.compile(r"^=+ slowest (\d+ )?durations =+$")
SUMMARY = re.compile(r"^=+ .*\b(passed|failed|error|errors|skipped|no tests ran)\b.* =+$")


def parse_durations(text: str) -> list[dict]:
    """Rows {"nodeid", "phase", "seconds"} of the durations section of pytest output `text`.

    Raises ValueError when the output has no durations section (pytest ran without
    `--durations=0`)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if HEADER.match(line)]
    if not starts:
        raise ValueError("no 'slowest durations' section in the pytest output: run pytest with "
                         "--durations=0 --durations-min=0")
    rows = []
    for line in lines[starts[-1] + 1:]:
        if SUMMARY.match(line) or line.startswith("="):
            break
        m = ROW.match(line)
        if m:
            rows.append({"nodeid": m.group(3), "phase": m.group(2), "seconds": float(m.group(1))})
    return rows


def _package_of(nodeid: str) -> str:
    parts = file_order.file_of(nodeid).split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def _totals(rows: list[dict], key) -> list[dict]:
    """Per key(nodeid): seconds per phase and in all, largest total first."""
    acc = collections.defaultdict(lambda: dict.fromkeys(PHASES, 0.0))
    for r in rows:
        acc[key(r["nodeid"])][r["phase"]] += r["seconds"]
    out = [{"name": k, **{p: round(v[p], 2) for p in PHASES}, "total": round(sum(v.values()), 2)}
           for k, v in acc.items()]
    return sorted(out, key=lambda d: -d["total"])


def summarise(rows: list[dict], top: int = 30) -> dict:
    """{"slowest": the `top` slowest (test, phase) rows, "files": per-file totals,
    "packages": per-package totals (tests/<dir>), "total_s": sum of every row}."""
    slowest = sorted(rows, key=lambda r: -r["seconds"])[:top]
    return {"slowest": slowest, "files": _totals(rows, file_order.file_of),
            "packages": _totals(rows, _package_of),
            "total_s": round(sum(r["seconds"] for r in rows), 2)}


def _cpu_totals(rows: list[dict], key) -> list[dict]:
    """Per key(nodeid): own, children and total CPU seconds, largest total first."""
    acc = collections.defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        acc[key(r["nodeid"])][0] += r["own"]
        acc[key(r["nodeid"])][1] += r["children"]
    out = [{"name": k, "own": round(o, 2), "children": round(c, 2), "total": round(o + c, 2)}
           for k, (o, c) in acc.items()]
    return sorted(out, key=lambda d: -d["total"])


def summarise_cpu(record: dict, top: int = 30) -> dict:
    """From a `--cpu_log` record: {"session_s": the session's CPU (the main pytest process,
    its workers and every subprocess), "tests_s" / "own_s" / "children_s": the test phases'
    sum and its two parts, "processes" (each with "in_tests": its own CPU inside test
    phases; the rest is collection and start-up), "slowest": the `top` costliest (test,
    phase) rows, "files", "packages"}."""
    rows = [dict(r, total=round(r["own"] + r["children"], 3)) for r in record["rows"]]
    in_tests = collections.Counter()
    for r in rows:
        in_tests[r.get("process", "main")] += r["own"]
    processes = [dict(p, in_tests=round(in_tests[p["name"]], 2)) for p in record["processes"]]
    main = [p for p in processes if p["name"] == "main"]
    own, children = sum(r["own"] for r in rows), sum(r["children"] for r in rows)
    return {"session_s": round(main[0]["own"] + main[0]["children"], 1) if main else None,
            "tests_s": round(own + children, 1), "own_s": round(own, 1),
            "children_s": round(children, 1), "processes": processes,
            "slowest": sorted(rows, key=lambda r: -r["total"])[:top],
            "files": _cpu_totals(rows, file_order.file_of),
            "packages": _cpu_totals(rows, _package_of),
            **summarise_jax(record, top)}


def summarise_jax(record: dict, top: int = 30) -> dict:
    """What JAX did in the tests' own CPU (tests/cpu_account.JaxAccount), when the record has
    it: {"jax": totals over the phases, "jax_files": per file (own CPU and the JAX parts),
    costliest `top`, "jax_sites": the `top` costliest call sites}; {} otherwise."""
    rows = [r for r in record["rows"] if "jax" in r]
    if not rows:
        return {}
    keys = list(rows[0]["jax"])
    acc = collections.defaultdict(lambda: dict.fromkeys(["own", *keys], 0.0))
    for r in rows:
        a = acc[file_order.file_of(r["nodeid"])]
        a["own"] += r["own"]
        for k in keys:
            a[k] += r["jax"][k]
    files = sorted(({"name": k, **{x: round(v, 2) for x, v in a.items()}} for k, a in acc.items()),
                   key=lambda d: -d["own"])
    totals = {k: round(sum(r["jax"][k] for r in rows), 1) for k in keys}
    return {"jax": dict(totals, own=round(sum(r["own"] for r in rows), 1)),
            "jax_files": files[:top], "jax_sites": record.get("jax_sites", [])[:top]}


def run_pytest(path: str, extra: list[str]) -> dict:
    """Run pytest on `path` in a child process; {"path", "returncode", "cpu_s", "wall_s",
    "rows", "tail"}."""
    cmd = [sys.executable, "-m", "pytest", "-q", "--durations=0", "--durations-min=0", *extra, path]
    before = cpu_account.children_cpu()
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    cpu = cpu_account.children_cpu() - before
    text = proc.stdout + proc.stderr
    try:
        rows = parse_durations(text)
    except ValueError:
        rows = []
    return {"path": path, "returncode": proc.returncode, "cpu_s": round(cpu, 1),
            "wall_s": round(wall, 1), "rows": rows, "tail": text.strip().splitlines()[-1:]}


def markdown(report: dict) -> str:
    """The report as markdown tables."""
    out = []
    if report.get("runs"):
        out += ["| path | CPU s (user+sys) | wall s | pytest exit | last line |",
                "|---|---|---|---|---|"]
        out += [f"| {r['path']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['returncode']} | "
                f"{' '.join(r['tail'])} |" for r in report["runs"]]
        out += [f"| **all** | {report['cpu_s']:.1f} | {report['wall_s']:.1f} | | |", ""]
    if report.get("cpu"):
        out += cpu_markdown(report["cpu"])
    s = report.get("summary")
    if s is None:
        return "\n".join(out) + "\n"
    out += [f"Sum of pytest's durations: {s['total_s']:.1f} s.", "",
            f"Slowest {len(s['slowest'])} (test, phase):", "",
            "| s | phase | test |", "|---|---|---|"]
    out += [f"| {r['seconds']:.2f} | {r['phase']} | `{r['nodeid']}` |" for r in s["slowest"]]
    for title, key in (("Per package", "packages"), ("Per file", "files")):
        out += ["", f"{title}:", "", "| name | setup s | call s | teardown s | total s |",
                "|---|---|---|---|---|"]
        out += [f"| `{d['name']}` | {d['setup']:.1f} | {d['call']:.1f} | {d['teardown']:.1f} | "
                f"{d['total']:.1f} |" for d in s[key]]
    return "\n".join(out) + "\n"


def cpu_markdown(c: dict) -> list[str]:
    """Markdown lines of `summarise_cpu`'s result."""
    session = (f"The session used {c['session_s']:.1f} CPU-s (every pytest process and "
               f"subprocess); " if c["session_s"] is not None else "")
    out = [f"{session}the test phases {c['tests_s']:.1f} CPU-s: {c['own_s']:.1f} in the tests' "
           f"processes, {c['children_s']:.1f} in subprocesses they waited for.", "",
           "| process | own CPU s | of which in test phases | children CPU s |", "|---|---|---|---|"]
    out += [f"| {p['name']} | {p['own']:.1f} | {p['in_tests']:.1f} | {p['children']:.1f} |"
            for p in c["processes"]]
    out += ["", f"Costliest {len(c['slowest'])} (test, phase) in CPU seconds:", "",
            "| CPU s | own | children | phase | test |", "|---|---|---|---|---|"]
    out += [f"| {r['total']:.2f} | {r['own']:.2f} | {r['children']:.2f} | {r['phase']} | "
            f"`{r['nodeid']}` |" for r in c["slowest"]]
    for title, key in (("CPU per package", "packages"), ("CPU per file", "files")):
        out += ["", f"{title}:", "", "| name | own s | children s | total s |", "|---|---|---|---|"]
        out += [f"| `{d['name']}` | {d['own']:.1f} | {d['children']:.1f} | {d['total']:.1f} |"
                for d in c[key]]
    if c.get("jax"):
        out += [""] + jax_markdown(c)
    return out + [""]


def jax_markdown(c: dict) -> list[str]:
    """Markdown lines of `summarise_jax`'s result."""
    j = c["jax"]
    out = [f"JAX in the tests' own {j['own']:.1f} CPU-s: tracing {j['trace']:.1f}, lowering "
           f"{j['lower']:.1f}, XLA compiles (or cache reads) {j['compile']:.1f}, for "
           f"{j['programs']:.0f} programs; {j['op_programs']:.0f} of them one JAX operation called "
           f"outside jit, whose lowering and compiles took {j['op_s']:.1f}.", "",
           f"Per file, costliest {len(c['jax_files'])} by own CPU:", "",
           "| file | own s | trace s | lower s | compile s | programs | of them single ops | their s |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| `{d['name']}` | {d['own']:.1f} | {d['trace']:.1f} | {d['lower']:.1f} | "
            f"{d['compile']:.1f} | {d['programs']:.0f} | {d['op_programs']:.0f} | {d['op_s']:.1f} |"
            for d in c["jax_files"]]
    if c["jax_sites"]:
        out += ["", f"Call sites, costliest {len(c['jax_sites'])} by lowering + compile CPU "
                    "(the innermost workspace line on the stack):", "",
                "| CPU s | programs | of them single ops | site |", "|---|---|---|---|"]
        out += [f"| {r['cpu']:.2f} | {r['programs']} | {r['op_programs']} | `{r['site']}` |"
                for r in c["jax_sites"]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("paths", nargs="*", help="test paths, each run in its own pytest")
    parser.add_argument("--out", required=True, help="folder for budget.json and budget.md")
    parser.add_argument("--log", help="read this saved pytest output instead of running pytest")
    parser.add_argument("--cpu_log", help="read this record of a pytest run with --cpu_log "
                        "(CPU seconds per test phase; tests/cpu_account.py)")
    parser.add_argument("--top", type=int, default=30, help="how many slowest rows (default 30)")
    parser.add_argument("--file_order", help="also write the per-file seconds to this JSON, the "
                        "record tests/conftest.py starts the slowest files first from "
                        "(tests/file_seconds.json; tests/file_order.py)")
    parser.add_argument("--pytest_args", default="",
                        help="extra pytest arguments, space separated (e.g. '-p no:xdist')")
    args = parser.parse_args(argv)
    if bool(args.paths) == bool(args.log or args.cpu_log):
        parser.error("give test paths to run, or --log=FILE and/or --cpu_log=FILE to read, "
                     "not both")
    if args.file_order and not (args.paths or args.log):
        parser.error("--file_order needs the durations of --log=FILE or of test paths")
    cpu = None
    if args.cpu_log:
        if not os.path.isfile(args.cpu_log):
            parser.error(f"--cpu_log={args.cpu_log}: no such file")
        try:
            cpu = summarise_cpu(cpu_account.load(args.cpu_log), args.top)
        except ValueError as e:
            parser.error(f"--cpu_log={args.cpu_log}: {e}")
    if args.cpu_log and not args.log:
        report = {"runs": [], "cpu": cpu}
    elif args.log:
        if not os.path.isfile(args.log):
            parser.error(f"--log={args.log}: no such file")
        try:
            rows = parse_durations(open(args.log).read())
        except ValueError as e:
            parser.error(f"--log={args.log}: {e}")
        report = {"runs": [], "summary": summarise(rows, args.top), "cpu": cpu}
    else:
        runs = []
        for path in args.paths:
            runs.append(run_pytest(path, args.pytest_args.split()))
            r = runs[-1]
            print(f"{path}: {r['cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s wall, pytest exit "
                  f"{r['returncode']}", file=sys.stderr, flush=True)
        rows = [row for r in runs for row in r["rows"]]
        report = {"runs": [{k: v for k, v in r.items() if k != "rows"} for r in runs],
                  "cpu_s": round(sum(r["cpu_s"] for r in runs), 1),
                  "wall_s": round(sum(r["wall_s"] for r in runs), 1),
                  "summary": summarise(rows, args.top)}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "budget.json"), "w") as f:
        json.dump(report, f, indent=1)
    if args.file_order:
        wd.write_text_atomic(args.file_order,
                             json.dumps(file_order.record(report["summary"]["files"]), indent=1) + "\n")
    text = markdown(report)
    with open(os.path.join(args.out, "budget.md"), "w") as f:
        f.write(text)
    print(text, end="")
    return 1 if any(r["returncode"] not in (0, 5) for r in report["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
