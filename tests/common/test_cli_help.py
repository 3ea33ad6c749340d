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


def _absl_scripts() -> list[str]:
    """Scripts (tools/, experiments/ other than main.py) that define absl flags and run."""
    found = []
    for path in sorted(glob.glob(os.path.join(paths.REPO_ROOT, "tools", "**", "*.py"), recursive=True)
                       + glob.glob(os.path.join(paths.REPO_ROOT, "experiments", "*", "*.py"))):
        with open(path) as f:
            text = f.read()
        if "flags.DEFINE" in text and '__name__ == "__main__"' in text and not path.endswith("main.py"):
            found.append(path)
    return found


def test_every_flag_tool_runs_through_run_tool_so_help_exits_0():
    scripts = _absl_scripts()
    assert len(scripts) >= 20
    direct = [os.path.relpath(p, paths.REPO_ROOT) for p in scripts
              if "app.run(" in open(p).read()
              or not any(call in open(p).read() for call in ("run_tool(", "cli.run("))]
    assert direct == [], f"call lib.common.cli.run_tool, not absl's app.run: {direct}"


def test_run_tool_help_prints_the_docstring_and_flags_and_exits_0(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(paths.REPO_ROOT, "tools", "targets.py"),
                           "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.startswith("Print every target of one or more runs")
    assert "--workdir: Run directories" in proc.stdout
    bad = subprocess.run([sys.executable, os.path.join(paths.REPO_ROOT, "tools", "targets.py")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert bad.returncode == 1 and "--workdir" in bad.stderr   # absl's missing-flag error stays
