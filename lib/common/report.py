"""Small helpers every experiment's results script uses: the machine line and README splicing.

    from lib.common import report
    results["machine"] = report.machine()
    report.splice("experiments/<name>/README.md", "quick", markdown_table)

`splice` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` in a markdown file, so a README's measured table is rewritten by
one command and never edited by hand. The file is written atomically (a temporary file and
`os.replace`), so an interrupted splice leaves the old README intact.
"""
from __future__ import annotations

import os
import platform
import re
import tempfile


def machine() -> str:
    """One line naming the machine and the JAX backend, e.g. for `results.json`."""
    import jax
    import numpy as np
    return (f"{platform.machine()}, {os.cpu_count()} CPU cores, {jax.device_count()} "
            f"{jax.default_backend()} device(s), jax {jax.__version__}, numpy {np.__version__}")


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


def cell(x, digits: int = 3, style: str = "g") -> str:
    """A markdown table cell: "—" for None, "yes"/"no" for a bool, else `x` formatted with
    `digits` and `style` ("g" significant digits, "f" fixed decimals)."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return f"{x:.{digits}{style}}"
