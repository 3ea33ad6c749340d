"""The README's commands are the ones CI runs."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    return re.findall(r"```(?:bash|sh)\n(.*?)\n```", text, flags=re.S)


def test_readme_has_exactly_two_one_line_commands_and_ci_runs_the_test_one():
    cmds = _readme_commands()
    assert all("\n" not in c for c in cmds)
    test_cmd = [c for c in cmds if "pytest" in c]
    main_cmd = [c for c in cmds if "experiments/multipdenet/main.py" in c]
    assert len(test_cmd) == 1 and len(main_cmd) == 1 and len(cmds) == 2
    ci = open(os.path.join(ROOT, ".ci", "run")).read()
    assert test_cmd[0].strip() in ci.splitlines()
