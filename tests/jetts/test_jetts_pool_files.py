"""Broken or foreign pool and tree files: the error names `path:line` and what is wrong."""
import json

import numpy as np
import pytest

from lib.jetts import pools as pools_lib
from tests.jetts.jetts_fakes import random_tree


def _pool(qid: str) -> pools_lib.Pool:
    q = pools_lib.Query(qid, "1+1", domain="arithmetic", meta={"a": 1, "b": 1})
    return pools_lib.Pool(q, [pools_lib.Response("2", 1.0, True), pools_lib.Response("3", 0.0)])


def _saved_pools(tmp_path) -> str:
    path = str(tmp_path / "pools.jsonl")
    pools_lib.save_pools(path, [_pool("q0"), _pool("q1"), _pool("q2")])
    return path


def _replace_line(path: str, lineno: int, text: str) -> None:
    with open(path) as f:
        lines = f.read().splitlines()
    lines[lineno - 1] = text
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def test_a_truncated_pool_line_names_path_and_line(tmp_path):
    path = _saved_pools(tmp_path)
    with open(path) as f:
        second = f.read().splitlines()[1]
    _replace_line(path, 2, second[: len(second) // 2])           # torn write / hand edit
    with pytest.raises(ValueError, match=rf"^{path}:2: not valid JSON \(") as info:
        pools_lib.load_pools(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("line, message", [
    ('[1, 2, 3]', r":3: expected a JSON object, got list"),
    ('{"responses": []}', r":3: not a pool record \(missing key 'query'\)"),
    (json.dumps({"query": {"qid": "x", "prompt": "p", "domain": "d", "colour": 1},
                 "responses": []}), r":3: not a pool record \(.*unexpected keyword argument 'colour'"),
    (json.dumps({"query": {"qid": "x", "prompt": "p", "domain": "d"}, "responses": []}),
     r":3: pool of 'x' has no responses"),
])
def test_a_foreign_pool_line_names_path_and_line(tmp_path, line, message):
    path = _saved_pools(tmp_path)
    _replace_line(path, 3, line)
    with pytest.raises(ValueError, match=message) as info:
        pools_lib.load_pools(path)
    assert str(info.value).startswith(f"{path}:3: ")


def test_a_tree_file_given_as_pools_and_a_missing_file(tmp_path):
    trees = str(tmp_path / "trees.jsonl")
    pools_lib.save_trees(trees, [random_tree(np.random.default_rng(0))])
    assert len(pools_lib.load_trees(trees)[0].nodes) > 1               # the file itself is fine
    with pytest.raises(ValueError, match=rf"^{trees}:1: not a pool record \(missing key 'responses'\)"):
        pools_lib.load_pools(trees)
    with pytest.raises(ValueError, match=rf"^{tmp_path}/nope.jsonl: no such file"):
        pools_lib.load_trees(str(tmp_path / "nope.jsonl"))


def test_stage_jsonl_makes_once_reuses_old_files_and_refuses_other_settings(tmp_path):
    from lib.common.config import WorkdirError
    from lib.common.stages import Stages
    made = []

    def make():
        made.append(1)
        return [_pool("q0"), _pool("q1")]

    args = (pools_lib.save_pools, pools_lib.load_pools)
    first, reused = pools_lib.stage_jsonl(Stages(str(tmp_path), "."), "data/p", make, *args,
                                          identity={"n": 2})
    assert not reused and (tmp_path / "data" / "p.jsonl").exists()
    again, reused = pools_lib.stage_jsonl(Stages(str(tmp_path), "."), "data/p", make, *args,
                                          identity={"n": 2})
    assert reused and made == [1] and again == first
    with pytest.raises(WorkdirError, match=r"stage 'data/p'.*n: 2 -> 3"):
        pools_lib.stage_jsonl(Stages(str(tmp_path), "."), "data/p", make, *args,
                              identity={"n": 3})
    # a file written by a run from before stages (no stage result) is reused as it is
    old = tmp_path / "old"
    rows = [{"query": {"qid": "a"}, "text": "1+1=2"}, {"query": {"qid": "b"}, "text": "x"}]
    pools_lib.save_rows(str(old / "data" / "rm_train.jsonl"), rows)
    got, reused = pools_lib.stage_jsonl(Stages(str(old), "."), "data/rm_train",
                                        lambda: pytest.fail("remade"), pools_lib.save_rows,
                                        pools_lib.load_rows)
    assert reused and got == rows
