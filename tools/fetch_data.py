"""Fetch a public data set into <repo>/data/<name>/ and verify every file's sha256.

    python tools/fetch_data.py epidemic              # EARTH's benchmark files
    python tools/fetch_data.py risk_irl              # the risk-IRL participants
    python tools/fetch_data.py epidemic --mirror=../shared/data/epidemic   # a local copy
    python tools/fetch_data.py --list

Sources, pinned commits and checksums: lib/data/public.py.
"""
from __future__ import annotations

import os
import sys

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.data import public  # noqa: E402

_MIRROR = flags.DEFINE_string("mirror", None, "A local folder with the same files (no download).")
_DEST = flags.DEFINE_string("dest", None, "Target folder (default: <repo>/data/<name>).")
_LIST = flags.DEFINE_bool("list", False, "List the data sets and exit.")


def main(argv):
    if _LIST.value:
        for name, s in public.SOURCES.items():
            print(f"{name}: {s.what} ({s.repo}@{s.commit[:10]}, {len(s.files)} files)")
        return 0
    if len(argv) != 2:
        raise app.UsageError(f"name one data set: {sorted(public.SOURCES)}")
    name = argv[1]
    try:
        written = public.fetch(name, _DEST.value, mirror=_MIRROR.value)
        dest = _DEST.value or public.default_dir(name)
        public.check(name, dest)
    except (public.DataError, OSError) as err:
        print(f"fetch_data: {err}", file=sys.stderr)
        return 2
    print(f"{name}: {len(public.SOURCES[name].files)} files verified in {dest} "
          f"({len(written)} written)")
    return 0


if __name__ == "__main__":
    app.run(lambda argv: sys.exit(main(argv)))
