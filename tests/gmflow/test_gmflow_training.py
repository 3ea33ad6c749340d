"""A tiny GMFlow training run lowers the loss and resumes from its checkpoint."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.gmflow import losses, toys, training
from lib.gmflow.networks import GMFlowMLP

STEPS = 30


def _task():
    model = GMFlowMLP(groups=1, channels=2, num_components=4, width=32, depth=1,
                      coord_embed_dim=8)

    def batch_fn(step):
        rng = np.random.default_rng([0, step])
        return {"x": toys.as_points(toys.checkerboard(rng, 64))}

    task = training.make_task(model, example_x=batch_fn(0)["x"], batch_fn=batch_fn,
                              batch_size=64, loss_kind="gm_transition", trans_ratio=0.9,
                              lr=1e-2, num_steps=STEPS, warmup=5, ema_decay=0.0)
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
