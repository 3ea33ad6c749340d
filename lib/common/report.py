"""Small helpers every experiment's results script uses: the machine line, README splicing
and the one target record.

    from lib.common import report
    results["machine"] = report.machine()
    report.splice("experiments/<name>/README.md", "quick", markdown_table)
    out["beats_baseline"] = report.target(ours > best, ours=ours, best=best)

`target` is the record of one target: its measured numbers and a bool under "met" (the
verdict). A paper's `targets(results)` nests records in dicts (and lists); `walk_targets`
lists every record of such a tree with its dotted path, and `verdict` is the word a
renderer prints for one ("MET" / "MISSED"); tools/targets.py prints them for any run.
Runs stored before a paper had records hold bare bools in their place: `met_of` reads one
verdict of either form and `met_tree` turns a tree of records into that bare-bool form,
so renderers give the same text from old and new results.json files.

`splice` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` in a markdown file, so a README's measured table is rewritten by
one command and never edited by hand. The file is written atomically (a temporary file and
`os.replace`), so an interrupted splice leaves the old README intact; tools/results.py
prints and splices a paper's block, reading the run with `read_results`.
"""
from __future__ import annotations

import os
import platform
import re

from lib.common import workdir as wd


def usable_cores() -> int:
    """The cores this process may run on (taskset, a container's CPU set); all of the
    machine's where the OS has no affinity call (macOS)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def cores_text() -> str:
    """"2 CPU cores", or "1 of 2 CPU cores (pinned)" when the process may run on fewer
    cores than the machine has (taskset, a container's CPU set)."""
    total = os.cpu_count()
    usable = usable_cores()
    if usable < total:
        return f"{usable} of {total} CPU cores (pinned)"
    return f"{total} CPU cores"


def machine() -> str:
    """One line naming the machine, the JAX backend and the load average when it is called
    (1 and 15 min, so a README says how busy the CPU was, not a guess), for `results.json`."""
    import jax
    import numpy as np
    one, _, fifteen = os.getloadavg()
    return (f"{platform.machine()}, {cores_text()}, {jax.device_count()} "
            f"{jax.default_backend()} device(s), jax {jax.__version__}, numpy {np.__version__}, "
            f"load average {one:.1f} / {fifteen:.1f} (1 / 15 min) at the end")


def machine_text(line: str) -> str:
    """`line` (a results.json "machine") for a README: lines written before `machine`
    recorded the load average say so rather than leave the load unstated."""
    return line if "load average" in line else f"{line} (load average not recorded)"


def splice(path: str, tag: str, text: str) -> None:
    """Replace the marked block `tag` of the markdown file `path` by `text`.

    Raises ValueError naming the file and the missing marker when the block is absent, or
    when it appears more than once (ambiguous), before anything is written.
    """
    with open(path) as f:
        doc = f.read()
    begin, end = f"<!-- results:{tag}:begin -->", f"<!-- results:{tag}:end -->"
    for marker in (begin, end):
        count = doc.count(marker)
        if count != 1:
            raise ValueError(f"{path}: expected exactly one {marker!r}, found {count}")
    if doc.index(begin) > doc.index(end):
        raise ValueError(f"{path}: {end!r} comes before {begin!r}")
    doc = re.sub(re.escape(begin) + r".*?" + re.escape(end),
                 lambda _: f"{begin}\n{text}\n{end}", doc, flags=re.S)
    wd.write_text_atomic(path, doc)   # never half-written; the mode a plain write gives


def read_results(workdir: str, experiment: str) -> dict:
    """`<workdir>/results.json`; FileNotFoundError naming it and
    `experiments/<experiment>/main.py` (which writes it) when there is none."""
    path = os.path.join(workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no {path}; run experiments/{experiment}/main.py first")
    return wd.read_json(path)


def _plain(x):
    """`x` with numpy (and JAX) scalars and arrays as Python numbers and lists, as the JSON
    writer stores them (workdir._default); dicts, lists and tuples keep their keys and type."""
    if hasattr(x, "tolist"):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


def target(met, **measured) -> dict:
    """The record of one target: the numbers behind it and `"met": bool(met)` (last), with
    numpy values converted as results.json stores them."""
    return {**{k: _plain(v) for k, v in measured.items()}, "met": bool(met)}


def is_target(x) -> bool:
    """A target record: a dict with a bool under "met"."""
    return isinstance(x, dict) and isinstance(x.get("met"), bool)


def walk_targets(tree, prefix: str = "") -> list[tuple[str, dict]]:
    """Every target record in the nested dicts and lists of `tree`, in insertion order, with
    its dotted path (dict keys, list indices; `prefix` first); a record's own nested
    records follow it. Anything else (bare bools, numbers, None) is skipped."""
    out = []

    def visit(node, path):
        if is_target(node):
            out.append((path, node))
        items = (node.items() if isinstance(node, dict) else
                 enumerate(node) if isinstance(node, (list, tuple)) else ())
        for key, child in items:
            visit(child, f"{path}.{key}" if path else str(key))

    visit(tree, prefix)
    return out


def met_of(record_or_bool):
    """The verdict of one target in either stored form: a record's "met", or a bare bool as
    results.json held it before target records (numpy bools as bool); None (a target that
    was not evaluated) stays None."""
    if isinstance(record_or_bool, dict):
        return record_or_bool["met"]
    return None if record_or_bool is None else bool(record_or_bool)


def met_tree(tree):
    """`tree` with every target record replaced by its "met" bool, all else as it is: the
    bare-bool form of a targets tree, so a renderer that prints a tree (as JSON, or counts
    its bools) gives the same text from results stored before and after target records."""
    if is_target(tree):
        return tree["met"]
    if isinstance(tree, dict):
        return {k: met_tree(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(met_tree(v) for v in tree)
    return tree


def verdict(record_or_bool) -> str:
    """The word for a verdict: "MET" or "MISSED", of a record's "met" or of a bool."""
    return "MET" if met_of(record_or_bool) else "MISSED"


def cell(x, digits: int = 3, style: str = "g") -> str:
    """A markdown table cell: "—" for None, "yes"/"no" for a bool, else `x` formatted with
    `digits` and `style` ("g" significant digits, "f" fixed decimals)."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.{digits}{style}}"


def markdown_table(headers: list[str], rows: list[list]) -> str:
    """A markdown table: a header row, the separator, and one row per list of cells (str())."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])
