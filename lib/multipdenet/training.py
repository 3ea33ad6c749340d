"""Training MultiPDENet and its baselines: the emulator a config names, the optimiser block,
the BPTT window loss and the `train_loop.Task`.

`window_loss`: MSE between a rollout of `train.window` macro steps from a sampled frame and
the next `train.window` frames of the same trajectory (unrolled training).
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.multipdenet import data as data_lib, emulators
from lib.multipdenet import model as mpn_model
from lib.nn import FNO, UNet


def net_spec(kind: str, m) -> dict | None:
    if kind == "none":
        return None
    if kind == "fno":
        return {"arch": "fno", "modes": m.fno_modes, "width": m.fno_width, "depth": m.fno_depth,
                "projection_width": m.fno_projection}
    return {"arch": "unet", "features": tuple(m.unet_features)}


def build_emulator(config, metadata: dict) -> emulators.Emulator:
    """The emulator that `config.model.name` names, for the dataset described by `metadata`."""
    m, b, pde = config.model, config.baseline, metadata["pde"]
    channels, ndim = len(metadata["fields"]), 1 if pde == "kdv" else 2
    if m.name == "multipdenet":
        model = mpn_model.make_model(
            pde, h=metadata["length"] / metadata["coarse_grid"], macro_dt=metadata["frame_dt"],
            n_micro=m.n_micro, integrator=m.integrator,
            coefficients=emulators.physics_coefficients(pde, metadata["params"]),
            filter_mode=m.filter_mode, filter_layout=m.filter_layout,
            corrector=net_spec(m.corrector, m), micro_net=net_spec(m.micro_net, m),
            macro_net=net_spec(m.macro_net, m), corrector_every=m.corrector_every)
        return emulators.multipdenet(model)
    if m.name == "fno":
        return emulators.autoregressive(FNO(
            out_channels=channels, modes=b.fno_modes, width=b.fno_width, depth=b.fno_depth,
            projection_width=b.fno_projection, spatial_dims=ndim))
    if m.name == "unet":
        return emulators.autoregressive(UNet(out_channels=channels, features=tuple(b.unet_features)))
    return emulators.coarse_solver(metadata, b.solver_steps_per_frame or None)


def optim_block(config) -> dict:
    """The `lib.common.optim` block: AdamW, clipping, warm-up, cosine to lr · end_lr_factor."""
    o = config.optim
    return dict(name="adamw", lr=o.lr, schedule="cosine", warmup=o.warmup,
                end_lr_factor=o.end_lr_factor, clip=o.clip, weight_decay=o.weight_decay)


def window_loss(emulator: emulators.Emulator, params: Any, batch: dict, window: int) -> jax.Array:
    """MSE between the rollout of `window` macro steps from `u0` and the labels (BPTT)."""
    pred = emulator.rollout(params, batch["u0"], window)  # (window, B, *grid, C)
    return jnp.mean((jnp.swapaxes(pred, 0, 1) - batch["target"]) ** 2)


def curriculum_loss(emulator: emulators.Emulator, params: Any, batch: dict, step: jax.Array,
                    num_steps: int, windows: tuple[int, ...]) -> jax.Array:
    """`window_loss` over the first `windows[i]` frames of `batch` (target `(B, max(windows),
    ...)`), phase `i = min(step · len(windows) // num_steps, len(windows) − 1)`: equal phases
    of the run. One branch runs per step (`lax.switch`), so early phases cost less."""
    if len(windows) == 1:
        return window_loss(emulator, params, batch, windows[0])
    phase = jnp.minimum(step * len(windows) // num_steps, len(windows) - 1)
    branches = [lambda p, b, w=w: window_loss(emulator, p, {"u0": b["u0"], "target": b["target"][:, :w]}, w)
                for w in windows]
    return jax.lax.switch(phase, branches, params, batch)


def make_task(config, emulator: emulators.Emulator, train_data: np.ndarray) -> train_loop.Task:
    opt = optim.make_optimizer(optim_block(config), config.train.num_steps)
    window, bs, seed = config.train.window, config.train.batch_size, config.train.seed
    windows = tuple(config.train.window_curriculum) or (window,)
    example = jnp.asarray(train_data[:1, 0])

    def init_state(key):
        return optim.init_state(emulator.init(key, example), opt)

    def train_step(state, batch, key):
        del key  # the models are deterministic
        loss, grads = jax.value_and_grad(curriculum_loss, argnums=1)(
            emulator, state["params"], batch, state["step"], config.train.num_steps, windows)
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss, "grad_norm": optax.tree.norm(grads)})

    def batch_fn(step, rows):
        batch = data_lib.window_batch(train_data, step, seed, bs, window)
        return {k: v[rows] for k, v in batch.items()}

    return train_loop.Task(init_state, train_step, batch_fn, bs,
                           learning_rate=optim.make_schedule(optim_block(config),
                                                             config.train.num_steps))
