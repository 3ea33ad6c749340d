"""The SWE-Gym run's shared pieces: the fine-tuning schedule handed to lib.lm.finetune, and
a workdir written before the move onto lib.common.stages resuming as it is."""
import json
import os

import pytest

from lib.common import config as config_lib
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.swe_gym import rft, workspace_lm
from lib.swe_gym.runs import Context

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("n, kw, steps, warmup", [
    (30, dict(epochs=1, min_steps=3, batch_size=8, warmup_steps=50), 4, 1),   # ceil(30/8)
    (3, dict(epochs=3, min_steps=60, batch_size=16, warmup_steps=0), 60, 0),  # min_steps wins
    (100, dict(epochs=3, min_steps=2, batch_size=16, warmup_steps=5), 21, 5),  # 3 * ceil(100/16)
])
def test_schedule_steps_warmup_cap_and_weight_decay(n, kw, steps, warmup):
    optim, loop = rft.schedule(n, lr=5e-4, seed=3, **kw)
    assert optim == {"lr": 5e-4, "num_steps": steps, "warmup_steps": warmup,
                     "weight_decay": 0.01, "grad_clip": 1.0}
    assert (loop.num_steps, loop.checkpoint_every, loop.keep_checkpoints, loop.seed,
            loop.log_every) == (steps, steps, 1, 3, 10)


def test_repeat_to_batch_fills_a_batch_and_refuses_nothing():
    convs = [[{"role": "user", "content": str(i)}] for i in range(3)]
    assert rft.repeat_to_batch(convs, 8) == convs * 3
    assert rft.repeat_to_batch(convs, 2) == convs
    with pytest.raises(ValueError, match="no conversations to train on"):
        rft.repeat_to_batch([], 4)


def test_a_workdir_from_before_the_stages_move_resumes(tmp_path, monkeypatch):
    """Old layout: stages/<name>.json and stages/_wall_s.json from the private stage cache,
    models/tokenizer.json from Tokenizer.save; nothing is recomputed."""
    config = config_lib.load_config(os.path.join(ROOT, "configs/swe_gym/swe_gym.py:tiny"))
    os.makedirs(tmp_path / "stages")
    os.makedirs(tmp_path / "models")
    stored = [{"instance_id": "a", "resolved": True}]
    (tmp_path / "stages" / "search.json").write_text(json.dumps(stored))
    (tmp_path / "stages" / "_wall_s.json").write_text(json.dumps({"search": 12.5}))
    tok = train_bpe(["fix(3, flip) finish()"] * 4, 5)
    tok.save(str(tmp_path / "models" / "tokenizer.json"))
    ctx = Context.open(config, str(tmp_path))

    def never(_):
        raise AssertionError("recomputed a stored stage")
    assert ctx.stages.run("search", never) == stored
    monkeypatch.setattr(workspace_lm, "train_bpe", never)
    assert workspace_lm.tokenizer(ctx, []) == tok
    ctx.stages.run("recheck", lambda d: [])                 # a new stage beside the old ones
    walls = ctx.stage_wall_s()
    assert walls["search"] == 12.5 and set(walls) == {"search", "recheck"}
    assert isinstance(Tokenizer.from_dict(ctx.models.run("tokenizer", never)), Tokenizer)
