"""The lm experiment end to end at the tiny variant: results.json, resume, LocalLM from the
workdir, and config errors before any compute."""
import os

import pytest

from experiments.lm import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.lm.local import LocalLM, load_run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "configs", "lm", "lm.py")


def tiny(**overrides):
    return config_lib.apply_overrides(config_lib.load_config(f"{CONFIG}:tiny"), overrides)


def test_tiny_run_writes_results_resumes_and_serves(tmp_path):
    cfg = tiny(**{"train.num_steps": 20, "eval.num_eval": 8, "eval.batch_size": 8,
                  "eval.plots": False})
    results = train.train_and_evaluate(cfg, str(tmp_path))
    assert results["step"] == 20 and results["resumed_from"] == 0
    e = results["eval"]
    assert e["num_eval"] == 8 and 0.0 <= e["exact_match"] <= 1.0
    assert e["target_met"] == (e["exact_match"] >= 0.95)
    for name in ("results.json", "results.md", "config.json", "lm_model.json", "tokenizer.json"):
        assert os.path.exists(tmp_path / name), name
    again = train.train_and_evaluate(cfg, str(tmp_path))        # resume: nothing left to train
    assert again["resumed_from"] == 20 and again["step"] == 20
    assert again["eval"]["num_correct"] == e["num_correct"]
    model_cfg, _, tok, step = load_run(str(tmp_path))
    assert step == 20 and model_cfg.vocab_size == tok.vocab_size
    lm = LocalLM.from_workdir(str(tmp_path))
    reply = lm.chat([{"role": "user", "content": "12+34"}], temperature=0, max_tokens=8)
    assert len(reply.choices) == 1


@pytest.mark.parametrize("overrides, message", [
    ({"model.num_heads": 3}, "divisible by 'model.num_heads'"),
    ({"model.max_len": 16}, "addition conversations need"),
    ({"task.num_train": 4}, "'task.num_train' = 4"),
    ({"model.dtype": "float16"}, "'model.dtype'"),
])
def test_bad_configs_are_refused_before_compute(tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(tiny(**overrides), str(tmp_path))
    assert not os.listdir(tmp_path)


def test_load_run_names_what_is_missing(tmp_path):
    with pytest.raises(ValueError, match="lm_model.json is missing"):
        load_run(str(tmp_path))
