"""lib.common.stages: cached results, identity refusal, preemption, name rules."""
import json
import os

import numpy as np
import pytest

from lib.common import guards
from lib.common.config import WorkdirError
from lib.common.stages import Stages


def test_a_stage_runs_once_and_its_rerun_reads_the_stored_result(tmp_path):
    calls = []

    def fn(d):
        calls.append(d)
        with open(os.path.join(d, "artifact.txt"), "w") as f:
            f.write("x")
        return {"acc": np.float32(0.5), "sizes": (1, 2), "arr": np.arange(3)}

    first = Stages(str(tmp_path)).run("runs/digits/dsl", fn, identity={"lr": 1e-3})
    again = Stages(str(tmp_path)).run("runs/digits/dsl", fn, identity={"lr": 1e-3})
    assert len(calls) == 1
    assert calls[0] == os.path.join(str(tmp_path), "stages", "runs", "digits", "dsl")
    assert first == again == {"acc": 0.5, "sizes": [1, 2], "arr": [0, 1, 2]}
    with open(tmp_path / "stages" / "runs" / "digits" / "dsl.json") as f:
        assert json.load(f) == first
    assert Stages(str(tmp_path)).wall_s("runs/digits/dsl") >= 0.0


def test_a_stored_result_with_other_settings_is_refused_naming_stage_and_key(tmp_path):
    Stages(str(tmp_path)).run("base", lambda d: 1, identity={"lr": 1e-3, "steps": 10})
    with pytest.raises(WorkdirError, match=r"stage 'base'.*lr: 0.001 -> 0.01"):
        Stages(str(tmp_path)).run("base", lambda d: 2, identity={"lr": 1e-2, "steps": 10})


def test_a_result_stored_before_identities_were_recorded_is_accepted(tmp_path):
    root = tmp_path / "stages"
    root.mkdir()
    (root / "pairs.json").write_text(json.dumps([1, 2, 3]))      # e.g. an old swe_gym stage
    out = Stages(str(tmp_path)).run("pairs", lambda d: pytest.fail("recomputed"),
                                    identity={"n": 3})
    assert out == [1, 2, 3]


def test_no_stage_starts_or_publishes_after_sigterm(tmp_path, monkeypatch):
    monkeypatch.setattr(guards, "_SEEN", True)
    with pytest.raises(guards.Preempted):
        Stages(str(tmp_path)).run("a", lambda d: pytest.fail("started"))
    assert not (tmp_path / "stages" / "a.json").exists()


def test_preempted_while_running_publishes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(guards, "_SEEN", False)

    def fn(d):
        guards._SEEN = True       # SIGTERM arrives while the stage runs (monkeypatch undoes)
        return 1
    with pytest.raises(guards.Preempted):
        Stages(str(tmp_path)).run("a", fn)
    assert not (tmp_path / "stages" / "a.json").exists()


@pytest.mark.parametrize("name", ["", "../x", "a//b", "_stages", "a/./b"])
def test_bad_stage_names_are_refused(tmp_path, name):
    with pytest.raises(ValueError, match="bad stage name"):
        Stages(str(tmp_path)).run(name, lambda d: 1)


def test_a_stage_that_keeps_no_files_leaves_no_folder(tmp_path):
    Stages(str(tmp_path)).run("pairs", lambda d: [1])
    assert sorted(os.listdir(tmp_path / "stages")) == ["_stages.json", "pairs.json"]
