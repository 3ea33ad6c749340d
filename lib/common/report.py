"""Small helpers every experiment's results script uses: the machine line and README splicing.

    from lib.common import report
    results["machine"] = report.machine()
    report.splice("experiments/<name>/README.md", "quick", markdown_table)

`splice` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` in a markdown file, so a README's measured table is rewritten by
one command and never edited by hand. The file is written atomically (a temporary file and
`os.replace`), so an interrupted splice leaves the old README intact. `results_tool` is the
whole command line of a `tools/<name>_results.py` script around its paper-specific render.
"""
from __future__ import annotations

import os
import platform
import re
import sys
import tempfile
from collections.abc import Callable

from lib.common import workdir as wd


def machine() -> str:
    """One line naming the machine, the JAX backend and the load average when it is called
    (1 and 15 min, so a README says how busy the CPU was, not a guess), for `results.json`."""
    import jax
    import numpy as np
    one, _, fifteen = os.getloadavg()
    return (f"{platform.machine()}, {os.cpu_count()} CPU cores, {jax.device_count()} "
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
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp_", suffix=".md")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(doc)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def results_tool(experiment: str, render: Callable[[dict, dict], str], *,
                 default_workdir: str | None = None, default_tag: str = "quick") -> None:
    """Run a results script: `render(results, config)` of a workdir, printed and spliced.

        # tools/<name>_results.py
        def render(results: dict, config: dict) -> str:
            return f"{tables(results)}\\n\\nConfig `{config['tag']}`; measured on ..."

        if __name__ == "__main__":
            report.results_tool("<name>", render)

    Defines the absl flags `--workdir` (default `default_workdir`, else
    `workdirs/<experiment>_quick`), `--readme` and `--tag` (default `default_tag`) and runs
    under `absl.app`: reads `<workdir>/results.json` and `config.json`, exits with a message
    naming the missing results file and `experiments/<experiment>/main.py` when there is
    none, prints `render`'s text and, with `--readme`, first splices it into the README's
    block `tag`. A script needing more flags defines them itself (absl flags are global)
    and reads them in `render`.
    """
    from absl import app, flags

    script = {"module_name": sys.argv[0]}         # so the script's --help lists the flags
    workdir = flags.DEFINE_string("workdir", default_workdir or f"workdirs/{experiment}_quick",
                                  "Run directory.", **script)
    readme = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.",
                                 **script)
    tag = flags.DEFINE_string("tag", default_tag, "Name of the marked block in --readme.", **script)

    def main(_):
        path = os.path.join(workdir.value, wd.RESULTS)
        if not os.path.exists(path):
            raise SystemExit(f"no {path}; run experiments/{experiment}/main.py first")
        results = wd.read_json(path)
        config = wd.read_json(os.path.join(workdir.value, wd.CONFIG))
        text = render(results, config)
        if readme.value:
            splice(readme.value, tag.value, text)
        print(text)

    app.run(main)


def cell(x, digits: int = 3, style: str = "g") -> str:
    """A markdown table cell: "—" for None, "yes"/"no" for a bool, else `x` formatted with
    `digits` and `style` ("g" significant digits, "f" fixed decimals)."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.{digits}{style}}"
