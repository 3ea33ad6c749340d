"""EARTH's default benchmark folder is checked file by file (sha256) before any compute."""
import os

import pytest

from lib.common import config as config_lib
from lib.common import paths
from lib.data import public
from lib.earth.config_schema import check_files

CONFIG = os.path.join(paths.REPO_ROOT, "configs", "earth", "earth.py")


def test_default_root_is_the_repository_data_folder():
    cfg = config_lib.load_config(f"{CONFIG}:quick")
    assert paths.resolve(cfg.data.root) == public.default_dir("epidemic")


def test_a_missing_or_altered_benchmark_file_names_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setattr(public, "default_dir", lambda name: str(tmp_path))
    cfg = config_lib.load_config(f"{CONFIG}:quick")
    cfg.data.root = str(tmp_path)
    with pytest.raises(config_lib.ConfigError, match="python tools/fetch_data.py epidemic"):
        check_files(cfg)
    shared = os.path.join(os.path.dirname(paths.REPO_ROOT), "shared", "data", "epidemic")
    if not os.path.isdir(shared):
        pytest.skip("no copy of the benchmark files beside the workspace")
    public.fetch("epidemic", str(tmp_path), mirror=shared)
    check_files(cfg)                                   # verified: passes
    with open(tmp_path / "japan.txt", "a") as f:
        f.write("0\n")
    with pytest.raises(config_lib.ConfigError, match=r"japan\.txt: sha256"):
        check_files(cfg)
