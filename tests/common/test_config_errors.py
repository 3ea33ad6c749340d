"""One-line errors: a config file that raises or does not parse names the file and line, and
the refusal of a workdir holding another config is one line with exit 2, both through a real
experiment binary; config.json/results.json are written with the usual file mode."""
import json
import os
import stat
import subprocess
import sys

import pytest

from lib.common import config as config_lib
from lib.common import workdir as wd
from tests.common import harness_utils as hu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAM = "configs/adam_abc/adam_abc.py"
RAISES = '''import ml_collections


def get_config(arg=None):
    sizes = {"tiny": 1}
    return ml_collections.ConfigDict({"n": sizes[arg]})
'''
SYNTAX = '''def get_config(arg=None):
    return {"n": 1
'''


def _main(*args: str) -> subprocess.CompletedProcess:
    """experiments/adam_abc/main.py (a cheap binary) with `args`; a timeout only for hangs."""
    return subprocess.run([sys.executable, "experiments/adam_abc/main.py", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**hu.clean_env(), "PYTHONPATH": ROOT})


def _one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    (line,) = hu.non_log_lines(proc.stderr)
    return line


def test_a_config_file_that_raises_in_get_config_is_one_line_naming_file_and_line(tmp_path):
    path = tmp_path / "raises.py"
    path.write_text(RAISES)
    line = _one_line(_main(f"--config={path}:quick", f"--workdir={tmp_path / 'w'}"))
    assert line == (f"config error: config file {path}:6: KeyError: 'quick' "
                    "(in get_config('quick'))")
    assert not os.path.exists(tmp_path / "w")


def test_a_config_file_with_a_syntax_error_is_one_line_naming_file_and_line(tmp_path):
    path = tmp_path / "syntax.py"
    path.write_text(SYNTAX)
    line = _one_line(_main(f"--config={path}:tiny", f"--workdir={tmp_path / 'w'}"))
    assert line.startswith(f"config error: config file {path}:2: syntax error: ")
    assert "never closed" in line


def test_a_config_file_that_raises_at_import_names_the_line(tmp_path):
    path = tmp_path / "at_import.py"
    path.write_text("import math\n\nSCALE = math.sqrt(-1)\n\ndef get_config(arg=None):\n"
                    "    return {}\n")
    with pytest.raises(config_lib.ConfigError) as err:
        config_lib.load_config(f"{path}:tiny")
    assert str(err.value) == (f"config file {path}:3: ValueError: math domain error "
                              "(while loading it)")


def test_a_workdir_of_another_config_is_one_line_exit_2_naming_every_key(tmp_path):
    workdir = tmp_path / "w"
    stored = config_lib.to_json_dict(config_lib.load_config(f"{ADAM}:tiny"))
    stored["seed"] = stored["seed"] + 1
    stored["rate"]["horizons"] = [7]
    wd.write_json_atomic(str(workdir / wd.CONFIG), stored)
    line = _one_line(_main(f"--config={ADAM}:tiny", f"--workdir={workdir}"))
    assert line.startswith(f"workdir error: workdir {str(workdir)!r} holds a run with a "
                           "different config (")
    now = config_lib.load_config(f"{ADAM}:tiny")
    assert f"'seed': {stored['seed']} in the workdir, {now.seed} now" in line
    assert f"'rate.horizons': [7] in the workdir, {list(now.rate.horizons)} now" in line
    assert json.load(open(workdir / wd.CONFIG)) == stored          # untouched


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_get_the_mode_of_a_plain_open(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        wd.write_json_atomic(str(tmp_path / "results.json"), {"x": 1})
        wd.write_text_atomic(str(tmp_path / "results.md"), "| x |\n")
    finally:
        os.umask(old)
    for name in ("results.json", "results.md"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode, name
