"""The 2-D toy's run: one DSL trained on two moons through lib.common.train_loop.

`toy(config, run_dir, mesh, plot_dir)` trains one DSL on scikit-learn's two moons (scaled
into Ω like every other set) in `run_dir` (the experiment's stage `runs/toy/dsl`) for
`toy.num_steps` steps, then returns its test accuracy and line statistics and (when
`plot_dir` is given) writes the plots of `toy.plot`.
"""
from __future__ import annotations

import dataclasses

import jax
import numpy as np

from lib.common import mesh as mesh_lib, train_loop
from lib.dsl import data as data_lib, toy as toy_lib
from lib.dsl.training import Model, effective_batch, make_plan, make_task, predict


def toy(config, run_dir: str, mesh, plot_dir: str | None) -> dict:
    """{"test_acc", "n_train", "n_test", "steps", line statistics} of the toy DSL
    (`guards.Preempted` on SIGTERM)."""
    m = config.model
    ds = data_lib.load("moons", config.data, domain=m.domain, radius=m.radius, seed=config.seed)
    model = Model("dsl", config, ds.dim, ds.num_classes)
    plan = make_plan(ds.y_train, (1.0,), 1, 1, config.seed)
    batch = effective_batch(config.optim.batch_size, mesh.shape[mesh_lib.DATA])
    seed = config.train.seed + 7919 * config.seed + 17
    task = make_task(model, ds, plan, config.optim.dsl.lr, config.optim.weight_decay, batch,
                     seed, config.optim.clip)
    loop = dataclasses.replace(train_loop.LoopConfig.from_config(config.train),
                               num_steps=config.toy.num_steps, seed=seed)
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)
    params = result.state["params"]
    logits, lines = predict(model, params, ds.x_test, config.eval.chunk)
    acc = float(np.mean(np.argmax(logits[0], -1) == ds.y_test))
    out = {"test_acc": acc, "n_train": len(ds.x_train), "n_test": len(ds.x_test),
           "steps": result.step, **lines}
    if plot_dir is not None:
        toy_lib.plot(model, jax.tree.map(lambda a: a[0], params), ds, config, plot_dir)
    return out
