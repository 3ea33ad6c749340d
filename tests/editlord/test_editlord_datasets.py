"""EditLord's pair stages: atomic pairs file, resume from the stage, adoption of a workdir
from before the stages, refusal of pairs built with other settings."""
import json
import os

import pytest

from configs.editlord import editlord as cfgmod
from lib.common.config import WorkdirError
from lib.common.stages import Stages
from lib.editlord import datasets
from lib.editlord import pairs as pairs_lib
from lib.editlord.pairs import Pair

PAIRS = [Pair("HumanEval/0:len_zero", "HumanEval/0", "", "def f(x):\n    return len(x) == 0",
              "def f(x):\n    return not x", ("len_zero",)),
         Pair("HumanEval/1:eval_int", "HumanEval/1", "import os", "def g(s):\n    return eval(s)",
              "def g(s):\n    return int(s)", ("eval_int",))]


@pytest.fixture
def builds(monkeypatch):
    """Counts HumanEval pair builds (which return PAIRS, no HumanEval needed)."""
    calls = []

    def build_pairs(probs, **kw):
        calls.append(kw)
        return list(PAIRS), {"unparsable": 1}
    monkeypatch.setattr(datasets.humaneval, "load", lambda limit=None: ["p"] * 3)
    monkeypatch.setattr(datasets.pairs_lib, "build_pairs", build_pairs)
    return calls


def test_pairs_round_trip_and_no_temporary_file_is_left(tmp_path):
    path = str(tmp_path / "pairs.jsonl")
    pairs_lib.save_pairs(path, PAIRS)
    assert pairs_lib.load_pairs(path) == PAIRS
    assert os.listdir(tmp_path) == ["pairs.jsonl"]


def test_pairs_stage_builds_once_then_resumes(tmp_path, builds):
    config = cfgmod.get_config("tiny")
    ps, stats = datasets.humaneval_pairs(config, Stages(str(tmp_path), folder="data"))
    again, stats2 = datasets.humaneval_pairs(config, Stages(str(tmp_path), folder="data"))
    assert ps == again == PAIRS and len(builds) == 1
    assert stats == stats2 == {"dropped": {"unparsable": 1}, "problems": 3}
    assert pairs_lib.load_pairs(str(tmp_path / "data" / "pairs.jsonl")) == PAIRS


def test_a_workdir_from_before_the_stages_is_adopted_without_a_rebuild(tmp_path, builds):
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "pairs.jsonl", "w") as f:            # the old, non-atomic writer's layout
        f.writelines(json.dumps(p.to_json()) + "\n" for p in PAIRS[:1])
    (data / "pairs.jsonl.stats.json").write_text(json.dumps({"dropped": {}, "problems": 1}))
    ps, stats = datasets.humaneval_pairs(cfgmod.get_config("tiny"),
                                         Stages(str(tmp_path), folder="data"))
    assert ps == PAIRS[:1] and stats == {"dropped": {}, "problems": 1} and builds == []
    # without its statistics (killed between the two writes) the old file is rebuilt
    os.remove(data / "pairs.json")
    os.remove(data / "pairs.jsonl.stats.json")
    ps, _ = datasets.humaneval_pairs(cfgmod.get_config("tiny"),
                                     Stages(str(tmp_path), folder="data"))
    assert ps == PAIRS and len(builds) == 1


def test_pairs_built_with_other_settings_are_refused(tmp_path, builds):
    datasets.humaneval_pairs(cfgmod.get_config("tiny"), Stages(str(tmp_path), folder="data"))
    other = cfgmod.get_config("tiny")
    other.data.max_chars = 300
    with pytest.raises(WorkdirError, match=r"stage 'pairs'.*max_chars: 400 -> 300"):
        datasets.humaneval_pairs(other, Stages(str(tmp_path), folder="data"))
