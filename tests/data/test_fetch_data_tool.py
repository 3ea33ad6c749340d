"""tools/fetch_data.py: --help exits 0, a failed download is one line naming the URL and
--mirror and leaves no folder, relative --mirror and --dest are under the repository root."""
import os
import subprocess
import sys

import pytest

from lib.common import paths
from lib.data import public

TOOL = os.path.join(paths.REPO_ROOT, "tools", "fetch_data.py")
SHARED = os.path.join(os.path.dirname(paths.REPO_ROOT), "shared", "data")


def _run(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, TOOL, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_help_exits_0_with_the_examples_and_flags(tmp_path):
    proc = _run("--help", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "--mirror=../shared/data/epidemic" in proc.stdout
    assert "--base_url" in proc.stdout and "under the repository root" in proc.stdout


def test_a_failed_download_is_one_line_naming_the_url_and_mirror_and_leaves_no_folder(tmp_path):
    dest = tmp_path / "new" / "risk_irl"
    # port 9 (discard) on the loopback: refused at once, nothing leaves the machine
    proc = _run("risk_irl", "--base_url=http://127.0.0.1:9", f"--dest={dest}", cwd=str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    first = next(iter(public.SOURCES["risk_irl"].files))
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"fetch_data: could not download http://127.0.0.1:9/data/{first} ("), line
    assert "--mirror=DIR" in line
    assert os.listdir(tmp_path) == []                 # neither dest, its parent nor a temp folder


def test_a_relative_mirror_is_under_the_repository_root_from_any_folder(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for file in public.SOURCES["risk_irl"].files:
        (mirror / file).write_text("not the data\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rel = os.path.relpath(mirror, paths.REPO_ROOT)   # not valid from `elsewhere`
    proc = _run("risk_irl", f"--mirror={rel}", f"--dest={tmp_path / 'out'}", cwd=str(elsewhere))
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()
    first = next(iter(public.SOURCES["risk_irl"].files))
    assert f"{os.path.join(paths.REPO_ROOT, rel, first)}: sha256 " in line, line  # found, read
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not os.path.isdir(os.path.join(SHARED, "risk_irl")),
                    reason="no copy of the data beside the workspace")
def test_the_help_example_works_from_another_folder_with_a_relative_dest(tmp_path):
    out = tmp_path / "out"
    proc = _run("risk_irl", "--mirror=../shared/data/risk_irl",
                f"--dest={os.path.relpath(out, paths.REPO_ROOT)}", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    public.check("risk_irl", str(out))
    assert sorted(os.listdir(tmp_path)) == ["out"]
