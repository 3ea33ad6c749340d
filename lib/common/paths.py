"""Where the workspace's default paths live: under the repository root, from any directory.

    paths.REPO_ROOT                  the checkout (the folder holding setup.cfg)
    paths.resolve("data/epidemic")   REPO_ROOT/data/epidemic; absolute paths unchanged

Default data folders (`data/<name>`) and workdirs (`workdirs/...`) are written relative
to the repository root and resolved here, so a binary or a notebook finds them whatever
its working directory is.
"""
from __future__ import annotations

import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def resolve(path: str) -> str:
    """`path` if absolute (or `~`-prefixed, expanded), else `REPO_ROOT/path`."""
    path = os.path.expanduser(path)
    return path if os.path.isabs(path) else os.path.join(REPO_ROOT, path)
