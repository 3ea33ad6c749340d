"""`--help` of every binary exits 0 and lists the workspace flags and its configs' variants;
`--dry_run` prints the validated config and computes nothing; defaults resolve from anywhere."""
import glob
import json
import os
import subprocess
import sys

from lib.common import cli, paths

BINARIES = sorted(glob.glob(os.path.join(paths.REPO_ROOT, "experiments", "*", "main.py")))
TIMEOUT_S = 900       # catches a hang only


def test_help_of_every_binary_lists_the_flags_and_the_variants(tmp_path):
    assert len(BINARIES) >= 19
    procs = {b: subprocess.Popen([sys.executable, b, "--help"], cwd=tmp_path, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for b in BINARIES}                        # all at once, from another folder
    for binary, proc in procs.items():
        out, err = proc.communicate(timeout=TIMEOUT_S)
        name = os.path.relpath(binary, paths.REPO_ROOT)
        assert proc.returncode == 0, f"{name}: exit {proc.returncode}: {err[-500:]}"
        for flag in ("--config:", "--workdir:", "--dry_run:", "--restart:", "--config.KEY=VALUE"):
            assert flag in out, f"{name}: {flag} missing"
        files = cli._config_files(binary)
        assert files, f"{name}: no configs/<experiment>/ files found"
        for path in files:
            _, variants = cli.file_variants(path)
            line = f"{os.path.relpath(path, paths.REPO_ROOT)}: {', '.join(variants)}"
            assert variants and line in out, f"{name}: {line!r} missing"
        assert "Try --helpfull" not in out
        first = out.splitlines()[0]
        assert first.strip() and first.strip()[0].isalnum(), f"{name}: no docstring first"
        with open(binary) as f:                        # raw docstrings: continuations kept
            continued = [line.strip() for line in f.read().split('"""')[1].splitlines()
                         if line.endswith("\\")]
        assert all(line in out.splitlines() or line in [o.strip() for o in out.splitlines()]
                   for line in continued), f"{name}: a continued line was joined"


def test_dry_run_prints_the_validated_config_and_computes_nothing(tmp_path):
    workdir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, os.path.join(paths.REPO_ROOT, "experiments", "multipdenet", "main.py"),
         "--config=" + os.path.join(paths.REPO_ROOT, "configs", "multipdenet", "burgers.py:tiny"),
         "--config.train.num_steps=7", f"--workdir={workdir}", "--dry_run"],
        capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-1000:]
    header, _, body = proc.stdout.partition("\n")
    assert "valid; would run in" in header and str(workdir) in header
    assert json.loads(body)["train"]["num_steps"] == 7
    assert not workdir.exists()
    bad = subprocess.run(
        [sys.executable, os.path.join(paths.REPO_ROOT, "experiments", "multipdenet", "main.py"),
         "--config=" + os.path.join(paths.REPO_ROOT, "configs", "multipdenet", "burgers.py:tiny"),
         "--config.train.num_steps=-1", f"--workdir={workdir}", "--dry_run"],
        capture_output=True, text=True, timeout=TIMEOUT_S)
    assert bad.returncode == 2 and "train.num_steps" in bad.stderr


def test_default_workdir_is_under_the_repository_root_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.default_workdir("configs/multipdenet/burgers.py:quick") == os.path.join(
        paths.REPO_ROOT, "workdirs", "multipdenet_burgers_quick")
