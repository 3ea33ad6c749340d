"""Public data files the workspace reads but may not redistribute: where they come from,
their sha256, and a verified fetch into `<repo>/data/<name>/`.

    python tools/fetch_data.py epidemic               # from the public source
    python tools/fetch_data.py epidemic --mirror=DIR  # from a local copy of the same files

Neither source repository carries a licence, so the files are not committed (not in
third_party/); they are fetched from the pinned commit of their public repository and
checked byte for byte. A file that fails its check is never used and never left in place:
downloads go to a temporary name and are renamed only after the check.
"""
from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request

from lib.common import paths


@dataclasses.dataclass(frozen=True)
class Source:
    repo: str                      # owner/name of the public repository
    commit: str                    # pinned commit
    folder: str                    # folder of the files in that repository
    files: dict[str, str]          # file name -> sha256 (of the gunzipped bytes if gunzip)
    what: str                      # one line for the README / error messages
    gunzip: bool = False           # checksums are of the decompressed content (a .gz file
                                   # recompressed by a packager still verifies)

    def url(self, name: str, base: str | None = None) -> str:
        base = base or f"https://raw.githubusercontent.com/{self.repo}/{self.commit}"
        return f"{base}/{self.folder}/{name}"


SOURCES = {
    "epidemic": Source(
        "Xiefeng69/EpiGNN", "9560aee7d779a9da63609ce32dbe1a3f3480a912", "data", {
            "region785.txt": "f6e7fdf21423dc5d43ef82cbde95eca5609c723973cb4aa4dd157de5b149a6cc",
            "region-adj.txt": "45168c9c561f0fa28eab8e8d3b8ee740fbe63bc75935565a8c99337963510548",
            "state360.txt": "364c1047dba84bc62b9011360332b679bc9cbcba1dbff1b9db210166f4289bf1",
            "state-adj-49.txt": "e8b147e43035bbf59deb9114af87b8bc6b098d031d3aeb9ed38338d19eeb087c",
            "japan.txt": "404600764e7a592bc6cc2e02a6d215efc452757d83a5da61c7df3a545f39411e",
            "japan-adj.txt": "6ad39f92b3f339f12eec06810bbaecff964e8f19660f481c6279f1476be06006",
            "australia-covid.txt":
                "4a22d90d6e63d1f0761d1f901338052f921714697339331d7a72cd1885378824",
            "australia-adj.txt":
                "e8c7bcea660fc8f5841580de0ca683850ef61482e143cc34503a5a274ba4608b"},
        "US-Regions, US-States, Japan and Australia-COVID series with adjacency (EpiGNN's "
        "data/, which credits Cola-GNN and JHU-CSSE)"),
    "risk_irl": Source(
        "filippolazzati/learning-utilities", "eaa2e4080d64d069ca4afa93d7d102d8979202f6", "data", {
            "data_MDP.csv": "01459dbc8c150ac6b22db90554bb6bed2d2e6f92ff7ae8b0616f3584ccfd51c8",
            "data_SG.csv": "52223d5b137b6092e74e76930df8a4ab7001deb8edb064310ceda9e2321c53c3"},
        "the 15 participants' investment-MDP and standard-gamble answers"),
    # MIT licence; 30 MB, so fetched rather than committed. The Debian package
    # dataset-fashion-mnist holds the same content (--mirror=/usr/share/datasets/fashion-mnist);
    # the labels were checked equal to the upstream repository's after decompression.
    "fashion_mnist": Source(
        "zalandoresearch/fashion-mnist", "b2617bb6d3ffa2e429640350f613e3291e10b141",
        "data/fashion", {
            "train-images-idx3-ubyte.gz":
                "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
            "train-labels-idx1-ubyte.gz":
                "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
            "t10k-images-idx3-ubyte.gz":
                "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
            "t10k-labels-idx1-ubyte.gz":
                "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"},
        "Fashion-MNIST (Xiao et al. 2017), gzipped IDX files", gunzip=True),
}


class DataError(ValueError):
    """A data file is missing or fails its checksum; the message names it and the fix."""


def default_dir(name: str) -> str:
    """`<repo>/data/<name>`: where `fetch` puts a data set and configs look by default."""
    _source(name)
    return os.path.join(paths.REPO_ROOT, "data", name)


def fetch_command(name: str) -> str:
    return f"python tools/fetch_data.py {name}"


def _source(name: str) -> Source:
    if name not in SOURCES:
        raise DataError(f"unknown data set {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]


def sha256(path: str, gunzip: bool = False) -> str:
    """sha256 of the file's bytes, or of its decompressed bytes (`gunzip`)."""
    h = hashlib.sha256()
    try:
        with (gzip.open if gunzip else open)(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, EOFError) as err:              # not gzip, or truncated
        return f"unreadable ({err})"
    return h.hexdigest()


def problems(name: str, directory: str) -> list[str]:
    """What is wrong with the copy of `name` in `directory` (empty: every file verified)."""
    out = []
    source = _source(name)
    for file, digest in source.files.items():
        path = os.path.join(directory, file)
        if not os.path.isfile(path):
            out.append(f"{path}: missing")
        elif (actual := sha256(path, source.gunzip)) != digest:
            out.append(f"{path}: sha256 {actual[:12]}… is not the expected {digest[:12]}…")
    return out


def check(name: str, directory: str) -> None:
    """DataError naming every missing or altered file of `name` and the fetch command."""
    bad = problems(name, directory)
    if not bad:
        return
    command = fetch_command(name) + ("" if directory == default_dir(name)
                                     else f" --dest={directory}")
    if len(bad) == len(_source(name).files) and all(b.endswith(": missing") for b in bad):
        raise DataError(f"data set {name!r} is not in {directory!r}; get it with: {command}")
    raise DataError(f"data set {name!r} in {directory!r} is not usable ({'; '.join(bad)}); "
                    f"get it with: {command}")


def fetch(name: str, dest: str | None = None, *, mirror: str | None = None,
          base_url: str | None = None, timeout_s: float = 60.0) -> list[str]:
    """Put every file of `name` into `dest` (default `default_dir(name)`), verified.

    mirror: a local folder holding the same files (copied instead of downloaded);
    base_url: instead of the public repository's raw-file address (tests use file://).
    Files already present and verified are kept; returns the paths written. A file whose
    download or copy fails its sha256 raises DataError and is not written; an existing
    file that fails its check is replaced only by a verified one.
    """
    source = _source(name)
    dest = dest or default_dir(name)
    os.makedirs(dest, exist_ok=True)
    written = []
    for file, digest in source.files.items():
        target = os.path.join(dest, file)
        if os.path.isfile(target) and sha256(target, source.gunzip) == digest:
            continue
        fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{file}.")
        try:
            with os.fdopen(fd, "wb") as out:
                if mirror is not None:
                    with open(os.path.join(mirror, file), "rb") as f:
                        shutil.copyfileobj(f, out)
                else:
                    with urllib.request.urlopen(source.url(file, base_url),
                                                timeout=timeout_s) as r:
                        shutil.copyfileobj(r, out)
            if (actual := sha256(tmp, source.gunzip)) != digest:
                origin = os.path.join(mirror, file) if mirror else source.url(file, base_url)
                raise DataError(f"{origin}: sha256 {actual} is not the expected {digest}; "
                                "not written")
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
            written.append(target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return written
