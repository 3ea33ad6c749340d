"""Public data: fetched from a mirror or a URL, every file checked by sha256, nothing
unverified left in place; the real sources' checksums match the copy beside the workspace."""
import hashlib
import os
import subprocess
import sys

import pytest

from lib.common import paths
from lib.data import public

SHARED = os.path.join(os.path.dirname(paths.REPO_ROOT), "shared", "data")


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A two-file data set 'toy' with a mirror folder."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    files = {}
    for name, text in (("a.txt", "1,2,3\n"), ("b.csv", "x,y\n4,5\n")):
        (mirror / name).write_text(text)
        files[name] = hashlib.sha256(text.encode()).hexdigest()
    monkeypatch.setitem(public.SOURCES, "toy", public.Source("o/r", "c" * 40, "d", files, "toy"))
    return mirror


def test_fetch_from_a_mirror_verifies_and_keeps_verified_files(fake, tmp_path):
    dest = tmp_path / "dest"
    written = public.fetch("toy", str(dest), mirror=str(fake))
    assert sorted(os.path.basename(p) for p in written) == ["a.txt", "b.csv"]
    public.check("toy", str(dest))
    assert public.fetch("toy", str(dest), mirror=str(fake)) == []       # nothing to redo


def test_a_download_through_a_url_is_checked(fake, tmp_path):
    (tmp_path / "base" / "d").mkdir(parents=True)
    for f in ("a.txt", "b.csv"):
        (tmp_path / "base" / "d" / f).write_bytes((fake / f).read_bytes())
    dest = tmp_path / "dest"
    public.fetch("toy", str(dest), base_url=(tmp_path / "base").as_uri())
    public.check("toy", str(dest))


def test_a_corrupt_source_file_is_named_and_not_written(fake, tmp_path):
    (fake / "b.csv").write_text("x,y\n4,6\n")
    dest = tmp_path / "dest"
    with pytest.raises(public.DataError, match=r"b\.csv: sha256 .* is not the expected"):
        public.fetch("toy", str(dest), mirror=str(fake))
    assert sorted(os.listdir(dest)) == ["a.txt"]          # no temporary file, no bad file


def test_check_names_every_missing_or_altered_file_and_the_command(fake, tmp_path):
    dest = tmp_path / "dest"
    public.fetch("toy", str(dest), mirror=str(fake))
    (dest / "a.txt").write_text("tampered\n")
    os.remove(dest / "b.csv")
    with pytest.raises(public.DataError) as err:
        public.check("toy", str(dest))
    msg = str(err.value)
    assert "a.txt: sha256" in msg and "b.csv: missing" in msg
    assert "python tools/fetch_data.py toy --dest=" in msg


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="no copy of the data beside the workspace")
@pytest.mark.parametrize("name", ["epidemic", "risk_irl"])
def test_the_pinned_checksums_match_the_copy_beside_the_workspace(name, tmp_path):
    dest = tmp_path / name
    proc = subprocess.run([sys.executable, os.path.join(paths.REPO_ROOT, "tools", "fetch_data.py"),
                           name, f"--mirror={os.path.join(SHARED, name)}", f"--dest={dest}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "verified" in proc.stdout
    with open(dest / sorted(public.SOURCES[name].files)[0], "ab") as f:
        f.write(b"\n")
    proc = subprocess.run([sys.executable, os.path.join(paths.REPO_ROOT, "tools", "fetch_data.py"),
                           name, f"--mirror={tmp_path / 'nowhere'}", f"--dest={dest}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


def test_paths_resolve_against_the_repository_root():
    assert paths.resolve("data/x") == os.path.join(paths.REPO_ROOT, "data", "x")
    assert paths.resolve("/abs/x") == "/abs/x"
    assert os.path.isfile(os.path.join(paths.REPO_ROOT, "setup.cfg"))


def test_an_absent_data_set_is_one_short_line(fake, tmp_path):
    with pytest.raises(public.DataError, match=r"^data set 'toy' is not in '.*'; get it with: "
                                               r"python tools/fetch_data.py toy --dest="):
        public.check("toy", str(tmp_path / "none"))


def test_gzip_sources_verify_their_content_not_their_compression(tmp_path, monkeypatch):
    import gzip
    payload = bytes(range(256)) * 64
    mirror = tmp_path / "m"
    mirror.mkdir()
    with gzip.open(mirror / "x.gz", "wb", compresslevel=9) as f:
        f.write(payload)
    digest = hashlib.sha256(payload).hexdigest()
    monkeypatch.setitem(public.SOURCES, "gz", public.Source("o/r", "c" * 40, "d",
                                                            {"x.gz": digest}, "gz", gunzip=True))
    public.fetch("gz", str(tmp_path / "a"), mirror=str(mirror))           # level 9 verifies
    with gzip.open(mirror / "x.gz", "wb", compresslevel=1) as f:          # recompressed
        f.write(payload)
    public.fetch("gz", str(tmp_path / "b"), mirror=str(mirror))
    with gzip.open(mirror / "x.gz", "wb") as f:                           # other content
        f.write(payload[:-1])
    with pytest.raises(public.DataError, match="is not the expected"):
        public.fetch("gz", str(tmp_path / "c"), mirror=str(mirror))
    (mirror / "x.gz").write_bytes(b"not gzip")
    with pytest.raises(public.DataError, match="unreadable"):
        public.fetch("gz", str(tmp_path / "d"), mirror=str(mirror))


@pytest.mark.skipif(not os.path.isdir("/usr/share/datasets/fashion-mnist"),
                    reason="Debian's dataset-fashion-mnist is not installed")
def test_fashion_mnist_checksums_match_the_debian_package(tmp_path):
    public.fetch("fashion_mnist", str(tmp_path), mirror="/usr/share/datasets/fashion-mnist")
