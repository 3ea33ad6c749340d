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


RUN_RESULTS = {"num_params": 835_584, "step": 1000, "train_wall_s": 2767.4, "final_loss": 0.00098,
           "model": {"num_layers": 4, "d_model": 128, "num_heads": 4},
           "eval": {"exact_match": 1.0, "num_correct": 500, "num_eval": 500,
                    "target_exact_match": 0.95, "target_met": True, "wrong_examples": []},
           "machine": "x86_64, 2 CPU cores", "wall_s": 2827.2}
RUN_CONFIG = {"tag": "lm_quick", "task": {"digits": 4, "num_train": 64_000},
              "train": {"batch_size": 64}}
EXPECTED = """\
| quantity | value |
|---|---|
| parameters | 835,584 |
| layers × width × heads | 4 × 128 × 4 |
| training steps | 1000 |
| training wall time | 2767 s |
| final masked NLL | 0.0010 |
| held-out exact match | 1.000 (500/500) |
| target | ≥ 0.95: MET |

Config `lm_quick` (4-digit operands, 64,000 training conversations, batch 64); measured on \
x86_64, 2 CPU cores (load average not recorded) in 2827 s. No wrong answers."""


def test_render_of_a_fixture_equals_the_block_of_the_code_before_the_move():
    from lib.lm.report import render
    assert render(RUN_RESULTS, RUN_CONFIG) == EXPECTED
    wrong = {**RUN_RESULTS["eval"], "exact_match": 0.5, "num_correct": 1, "num_eval": 2,
             "target_met": False,
             "wrong_examples": [{"problem": "0001+0002", "reply": "1+2+0=03 =00004", "truth": 3}]}
    text = render({**RUN_RESULTS, "eval": wrong}, RUN_CONFIG)
    assert "| target | ≥ 0.95: MISSED |" in text
    assert text.endswith("Some wrong answers: `0001+0002` → `3 =00004` (truth 3).")  # last 8
