"""Best-on-validation selection in `train_loop.train`: the right state is kept, a resumed
run continues from the recorded best, and bad validation settings fail before training."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.common.checkpoint import Checkpointer
from tests.common import regression_app as app


def _config(num_steps):
    return config_lib.apply_overrides(app.get_config("tiny"), {"train.num_steps": num_steps})


def _validation(mode="min", metric="distance", every=10):
    """A validation whose optimum is known: `distance` is smallest at step 30; `val_mse` is
    a real held-out loss of the model, reported alongside."""
    config = _config(50)
    model = app.MLP(config.model.hidden)
    rng = np.random.default_rng(99)
    x = rng.normal(size=(64, config.data.dim)).astype(np.float32)
    y = x.sum(axis=1)

    @jax.jit
    def evaluate(state):
        distance = jnp.abs(state["step"] - 30).astype(jnp.float32)
        mse = jnp.mean((model.apply(state["params"], x) - y) ** 2)
        return {"distance": distance if mode == "min" else -distance, "mse": mse}

    return train_loop.Validation(evaluate, every=every, metric=metric, mode=mode)


def _train(workdir, num_steps, validation):
    config = _config(num_steps)
    return train_loop.train(app.make_task(config), train_loop.LoopConfig.from_config(config.train),
                            workdir=workdir, mesh=mesh_lib.make_mesh(), validation=validation)


@pytest.mark.parametrize("mode", ["min", "max"])
def test_best_state_is_kept_and_restored(tmp_path, mode):
    workdir = str(tmp_path)
    result = _train(workdir, 50, _validation(mode))
    assert result.best["step"] == 30 and result.best["value"] == 0.0
    record = json.load(open(os.path.join(workdir, train_loop.BEST_RECORD)))
    assert record == result.best and set(record["metrics"]) == {"distance", "mse"}
    task = app.make_task(_config(50))
    best, record = train_loop.restore_best(task, workdir)
    assert int(best["step"]) == 30
    # The kept state is the training state at step 30 (the regular checkpoint of step 30).
    ckpt = Checkpointer(os.path.join(workdir, "checkpoints"), save_every=10)
    regular, step = ckpt.restore_latest(jax.eval_shape(task.init_state, jax.random.key(0)))
    ckpt.close()
    assert step == 50
    rows = [json.loads(line) for line in open(os.path.join(workdir, "metrics.jsonl"))]
    val_steps = [r["step"] for r in rows if "val_mse" in r]
    assert val_steps == [0, 10, 20, 30, 40, 50]
    for a, b in zip(jax.tree.leaves(best["params"]), jax.tree.leaves(regular["params"])):
        assert not np.array_equal(a, b)   # step 30 differs from the final step 50


def test_resumed_run_continues_from_the_recorded_best(tmp_path):
    workdir = str(tmp_path)
    first = _train(workdir, 20, _validation())
    assert first.best["step"] == 20
    second = _train(workdir, 50, _validation())
    assert second.resumed_from == 20 and second.best["step"] == 30
    full = _train(str(tmp_path / "full"), 50, _validation())
    best_a, _ = train_loop.restore_best(app.make_task(_config(50)), workdir)
    best_b, _ = train_loop.restore_best(app.make_task(_config(50)), str(tmp_path / "full"))
    for a, b in zip(jax.tree.leaves(best_a), jax.tree.leaves(best_b)):
        np.testing.assert_array_equal(a, b)
    assert full.best == second.best


def test_unknown_metric_fails_before_training(tmp_path):
    workdir = str(tmp_path)
    with pytest.raises(KeyError, match=r"'accuracy' is not among the validation metrics "
                                        r"\['distance', 'mse'\]"):
        _train(workdir, 50, _validation(metric="accuracy"))
    assert not [s for s in os.listdir(os.path.join(workdir, "checkpoints")) if s.isdigit()]


def test_bad_settings_and_mismatched_record(tmp_path):
    with pytest.raises(ValueError, match="every=0 must be >= 1"):
        _train(str(tmp_path / "a"), 10, _validation(every=0))
    with pytest.raises(ValueError, match="mode='median'"):
        _train(str(tmp_path / "b"), 10, _validation(mode="median"))
    workdir = str(tmp_path / "c")
    _train(workdir, 10, _validation())
    with pytest.raises(ValueError, match="selects on 'distance' but this run selects on 'mse'"):
        _train(workdir, 20, _validation(metric="mse"))
    with pytest.raises(ValueError, match="has no best.json"):
        train_loop.restore_best(app.make_task(_config(10)), str(tmp_path / "none"))
