"""A tiny GMFlow training run lowers the loss and resumes from its checkpoint; the `optim`
block: its defaults are the former fixed recipe, `official`'s schedule is the official warm-up
then constant rate, and the "karras" EMA is what the train step carries."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import mesh as mesh_lib
from lib.common import optim, train_loop
from lib.common.config import load_config
from lib.gmflow import losses, toys, training
from lib.gmflow.networks import GMFlowMLP

STEPS = 30


def _task(optim_block=None):
    model = GMFlowMLP(groups=1, channels=2, num_components=4, width=32, depth=1,
                      coord_embed_dim=8)

    def batch_fn(step):
        rng = np.random.default_rng([0, step])
        return {"x": toys.as_points(toys.checkerboard(rng, 64))}

    task = training.make_task(model, example_x=batch_fn(0)["x"], batch_fn=batch_fn,
                              batch_size=64, loss_kind="gm_transition", trans_ratio=0.9,
                              num_steps=STEPS,
                              optim_block=optim_block or {"lr": 1e-2, "warmup": 5,
                                                          "ema_decay": 0.0})
    return model, task


def _eval_loss(model):
    """params -> the transition loss on a fixed batch of 2048 points and a fixed key (one
    compile for the three evaluations)."""
    x = jnp.asarray(toys.as_points(toys.checkerboard(np.random.default_rng(123), 2048)))
    fn = losses.loss_fn("gm_transition", 0.9)
    loss = jax.jit(lambda params: fn(lambda xt, t: model.apply(params, xt, t), x,
                                      jax.random.key(9)))
    return lambda params: float(loss(params))


def test_tiny_run_lowers_loss_and_resumes_from_its_checkpoint(tmp_path):
    """Half the steps, then the same command with the full count: the second run restores
    the step-15 checkpoint, trains on, and the loss on a fixed batch has dropped. (That a
    resumed run is bit-identical to an uninterrupted one is the harness's own test,
    tests/common/test_resume.py.)"""
    model, task = _task()
    # one device: checkpointing a state replicated over the 8 fake test devices costs more
    # than the training; sharded training is covered by tests/common
    mesh = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    init = jax.jit(task.init_state)(jax.random.key(0))  # train_loop's init key (seed 0)
    workdir = str(tmp_path / "run")
    half = train_loop.train(task, train_loop.LoopConfig(num_steps=STEPS // 2, log_every=15,
                                                        checkpoint_every=15),
                            workdir=workdir, mesh=mesh)
    resumed = train_loop.train(task, train_loop.LoopConfig(num_steps=STEPS, log_every=15,
                                                           checkpoint_every=15),
                               workdir=workdir, mesh=mesh)
    assert half.step == STEPS // 2 and half.resumed_from == 0
    assert resumed.resumed_from == STEPS // 2 and resumed.step == STEPS
    assert int(resumed.state["step"]) == STEPS
    half_params = jax.device_get(half.state["params"])
    eval_loss = _eval_loss(model)
    before = eval_loss(init["params"])
    middle = eval_loss(half_params)
    after = eval_loss(jax.device_get(resumed.state["params"]))
    assert after < middle < before, (before, middle, after)
    assert after < before - 0.1, (before, after)


def test_default_optim_block_is_the_former_fixed_recipe():
    """Without the schedule/clip/β₂/EMA keys the optimiser is the one every recorded run
    used (AdamW β₂ 0.99, clip 10, cosine to lr/10) and the EMA the constant-decay one."""
    former = dict(name="adamw", lr=1e-3, schedule="cosine", warmup=200, end_lr_factor=0.1,
                  clip=10.0, b2=0.99)
    block = training.optimizer_block_from({"lr": 1e-3, "warmup": 200})
    assert optim.settings(block) == optim.settings(former)
    s = training.optim_settings({})
    assert (s["ema_kind"], s["ema_decay"]) == ("exp", 0.995)
    with pytest.raises(ValueError, match="ema_gama"):
        training.optim_settings({"ema_gama": 7.0})


def test_official_schedule_is_the_linear_warmup_then_a_constant_rate():
    """mmcv's policy 'fixed' with warmup 'linear', warmup_iters 1000, warmup_ratio 0.001:
    lr · (1 − (1 − i/1000)(1 − 0.001)) at iteration i < 1000, then lr."""
    cfg = load_config("configs/gmflow/gmflow.py:official")
    sched = optim.make_schedule(training.optimizer_block_from(cfg.optim),
                               cfg.train.num_steps)
    for i in (0, 1, 500, 999, 1000, 1001, 100_000, 199_999):
        want = 2e-4 * (1 - (1 - i / 1000) * (1 - 0.001)) if i < 1000 else 2e-4
        np.testing.assert_allclose(float(sched(i)), want, rtol=1e-5, err_msg=str(i))


def test_karras_ema_in_the_train_step():
    """β_1 = 0: after the first update the EMA is the parameters; after the second it is
    p₁ + (1 − (1/2)^(γ+1)) (p₂ − p₁)."""
    _, task = _task({"lr": 1e-2, "warmup": 5, "ema_kind": "karras", "ema_gamma": 7.0})
    step = jax.jit(task.train_step)
    state = jax.jit(task.init_state)(jax.random.key(0))
    batch = lambda i: {"x": jnp.asarray(task.batch_fn(i, slice(None))["x"])}
    s1, _ = step(state, batch(0), jax.random.key(1))
    s2, _ = step(s1, batch(1), jax.random.key(2))
    w2 = 1 - 0.5 ** 8
    for e1, p1, e2, p2 in zip(*(jax.tree.leaves(x) for x in (
            s1["ema"], s1["params"], s2["ema"], s2["params"]))):
        np.testing.assert_allclose(e1, p1, rtol=0, atol=1e-6)
        np.testing.assert_allclose(e2, p1 + w2 * (p2 - p1), rtol=0, atol=1e-6)
    assert not np.allclose(jax.tree.leaves(s2["params"])[0], jax.tree.leaves(s1["params"])[0])
