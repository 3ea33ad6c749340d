"""The prepared device scripts (tools/bench/*_gpu.sh) run what exists: each is run here with
`python3` replaced by a recorder, and every command it would start is checked without
running it: its program exists, its `--config` loads with its `--config.KEY=VALUE`
overrides applied and validated (as `--dry_run` does), the committed models it names exist,
and the front tool gets only flags it defines. A device is lent rarely and briefly; a script
that fails on a renamed model or flag there wastes the loan.
"""
import glob
import json
import os
import re
import shlex
import subprocess

import pytest

from lib.common import cli, config as config_lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "tools", "bench", "*_gpu.sh")))
FRONT_TOOL = "tools/bench/multipdenet_front.py"
# records each python3 command line (one shell-quoted line per call) and succeeds
RECORDER = '#!/usr/bin/env bash\nprintf "%q " "$@" >> "$PY_CALLS"\necho >> "$PY_CALLS"\n'


def _recorded_calls(script: str, tmp_path) -> list[list[str]]:
    """The python3 command lines the script's device mode starts, in order."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir(exist_ok=True)
    (fake_bin / "python3").write_text(RECORDER)
    (fake_bin / "python3").chmod(0o755)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    out = str(tmp_path / "out")
    args = ["run", out] if "\n  run)" in open(script).read() else [out]   # `prepare | run OUT`
    env = {**os.environ, "PATH": f"{fake_bin}:{os.environ['PATH']}", "PY_CALLS": str(calls)}
    proc = subprocess.run(["bash", script, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [shlex.split(line) for line in calls.read_text().splitlines() if line.strip()]


def _flag(argv: list[str], name: str) -> str | None:
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)


def _defined_flags(path: str) -> set[str]:
    return set(re.findall(r'DEFINE_\w+\(\s*"(\w+)"', open(os.path.join(ROOT, path)).read()))


def check_commands(script: str, tmp_path) -> None:
    """Assert that every program the script starts, and what it names, exists (module doc)."""
    calls = [c for c in _recorded_calls(script, tmp_path) if c and c[0].endswith(".py")]
    assert calls, "the script starts no program"
    for argv in calls:
        program, args = argv[0], argv[1:]
        assert os.path.isfile(os.path.join(ROOT, program)), program
        spec = _flag(args, "config")
        if spec:                              # loads, overrides apply, the file's checks pass
            config = cli.resolve_config(spec, config_lib.override_keys(args))
            cli.dry_run_text(spec, config, _flag(args, "workdir") or "")
        for path in (_flag(args, "workdir") or "").split(","):
            if path.startswith("experiments/"):   # committed models; workdirs/ are made before
                assert os.path.isdir(os.path.join(ROOT, path)), f"{program}: no {path}"
        if program == FRONT_TOOL:
            unknown = {a[2:].split("=")[0] for a in args if a.startswith("--")} - _defined_flags(FRONT_TOOL)
            assert not unknown, f"{FRONT_TOOL} has no flags {sorted(unknown)}"


@pytest.mark.parametrize("script", SCRIPTS, ids=os.path.basename)
def test_every_command_of_a_device_script_names_what_exists(script, tmp_path):
    check_commands(script, tmp_path)


def test_the_front_script_times_the_point_the_flagship_verdict_rests_on(tmp_path):
    script = os.path.join(ROOT, "tools", "bench", "multipdenet_front_gpu.sh")
    front = [c for c in _recorded_calls(script, tmp_path) if c and c[0] == FRONT_TOOL]
    with open(os.path.join(ROOT, "experiments", "multipdenet", "front.json")) as f:
        best = json.load(f)["targets"]["floor"]["best_point"]      # "multipdenet (<run>)"
    run = re.fullmatch(r"\w+ \((.+)\)", best).group(1)
    assert len(front) == 1 and any(os.path.basename(p) == run for p in _flag(front[0][1:], "workdir").split(","))


def test_a_renamed_model_or_flag_is_caught(tmp_path):
    """The check fails on a script that names a model that is not committed, or a flag the
    front tool does not define."""
    text = open(os.path.join(ROOT, "tools", "bench", "multipdenet_front_gpu.sh")).read()
    text = text.replace('cd "$(dirname "$0")/../.."', f'cd "{ROOT}"')
    for i, (old, new, message) in enumerate([
            ("$T/front_32 ", "$T/front_33 ", "no experiments/multipdenet/trained/front_33"),
            ("--repeats=5", "--rounds=5", r"has no flags \['rounds'\]")]):
        assert old in text
        bad = tmp_path / f"bad_{i}_gpu.sh"
        bad.write_text(text.replace(old, new))
        with pytest.raises(AssertionError, match=message):
            check_commands(str(bad), tmp_path)
