"""Fetch a public data set into <repo>/data/<name>/ and verify every file's sha256.

    python tools/fetch_data.py epidemic              # EARTH's benchmark files
    python tools/fetch_data.py risk_irl              # the risk-IRL participants
    python tools/fetch_data.py epidemic --mirror=../shared/data/epidemic   # a local copy
    python tools/fetch_data.py --list

Relative --mirror and --dest paths are under the repository root, like the default
data/<name>: the example's ../shared/ is the folder beside the checkout, from any working
folder. A new folder is filled under a temporary name beside it and renamed once every
file is verified, so a failed fetch leaves no folder behind; an existing folder keeps its
verified files and gets only verified ones. Errors are one line on stderr, exit status 2.

Sources, pinned commits and checksums: lib/data/public.py.
"""
from __future__ import annotations

import http.client
import os
import shutil
import sys
import tempfile
import urllib.error

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common import paths  # noqa: E402
from lib.common.cli import run_tool  # noqa: E402
from lib.data import public  # noqa: E402

_MIRROR = flags.DEFINE_string("mirror", None, "A local folder with the same files (no "
                              "download); relative: under the repository root.")
_DEST = flags.DEFINE_string("dest", None, "Target folder (default: <repo>/data/<name>); "
                            "relative: under the repository root.")
_BASE_URL = flags.DEFINE_string("base_url", None, "Download from this address instead of the "
                                "pinned public repository (same layout: BASE_URL/FOLDER/FILE).")
_LIST = flags.DEFINE_bool("list", False, "List the data sets and exit.")


def _download_error(name: str, directory: str, base_url: str | None, err: Exception):
    """DataError naming the URL of the file whose download failed (the first file of `name`
    not verified in `directory`: `public.fetch` takes them in order) and --mirror."""
    source = public.SOURCES[name]
    failed = next((f for f, digest in source.files.items()
                   if public.sha256(os.path.join(directory, f), source.gunzip) != digest),
                  next(iter(source.files)))
    reason = (err.reason if isinstance(err, urllib.error.URLError)
              and not isinstance(err, urllib.error.HTTPError) else err)
    return public.DataError(
        f"could not download {source.url(failed, base_url)} ({reason}); to copy the files "
        f"from a local folder instead: --mirror=DIR")


def _fetch_into(name: str, directory: str, mirror: str | None, base_url: str | None) -> list[str]:
    try:
        return public.fetch(name, directory, mirror=mirror, base_url=base_url)
    except (OSError, http.client.HTTPException) as err:
        if mirror is not None:
            raise
        raise _download_error(name, directory, base_url, err) from err


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fetch(name: str, dest: str, mirror: str | None = None,
          base_url: str | None = None) -> list[str]:
    """`public.fetch` into `dest`; a `dest` that does not exist is filled under a temporary
    name beside it and renamed only when every file is verified (on failure it, and any
    parent folder made for it, is removed). Returns the paths written."""
    if os.path.isdir(dest):
        return _fetch_into(name, dest, mirror, base_url)
    parent = os.path.dirname(os.path.abspath(dest))
    made = []                     # the missing parent folders, deepest first
    folder = parent
    while not os.path.isdir(folder):
        made.append(folder)
        folder = os.path.dirname(folder)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(dest)}.")
    try:
        written = _fetch_into(name, tmp, mirror, base_url)
        public.check(name, tmp)
        os.chmod(tmp, 0o777 & ~_umask())     # a plain mkdir's mode, not mkdtemp's 0o700
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for folder in made:
            try:
                os.rmdir(folder)
            except OSError:
                break
        raise
    return [os.path.join(dest, os.path.relpath(p, tmp)) for p in written]


def main(argv):
    if _LIST.value:
        for name, s in public.SOURCES.items():
            print(f"{name}: {s.what} ({s.repo}@{s.commit[:10]}, {len(s.files)} files)")
        return 0
    if len(argv) != 2:
        raise app.UsageError(f"name one data set: {sorted(public.SOURCES)}")
    name = argv[1]
    mirror = paths.resolve(_MIRROR.value) if _MIRROR.value else None
    try:
        dest = paths.resolve(_DEST.value) if _DEST.value else public.default_dir(name)
        written = fetch(name, dest, mirror, _BASE_URL.value)
        public.check(name, dest)
    except (public.DataError, OSError) as err:
        print(f"fetch_data: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print(f"{name}: {len(public.SOURCES[name].files)} files verified in {dest} "
          f"({len(written)} written)")
    return 0


if __name__ == "__main__":
    run_tool(lambda argv: sys.exit(main(argv)))
