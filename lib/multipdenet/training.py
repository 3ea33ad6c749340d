"""Training MultiPDENet and its baselines: the emulator a config names, the optimiser block,
the BPTT window loss and the `train_loop.Task`.

`window_loss`: MSE between a rollout of `train.window` macro steps from a sampled frame and
the next `train.window` frames of the same trajectory (unrolled training), plus the levers
for long rollouts that go beyond the paper (each off by default):
- training noise (`train.noise_std`, Sanchez-Gonzalez et al. 2020): Gaussian noise of that
  fraction of each input's RMS is added to the input frame;
- pushforward (`train.pushforward` = k, Brandstetter et al. 2022): the model first rolls k
  macro steps from the data without gradient, and the window starts from its own state;
- a correlation term (`train.corr_weight`): w · mean over frames of 1 − Pearson correlation
  of prediction and label, the quantity the HCT metric thresholds;
- `train.remat`: `jax.checkpoint` per macro step, for long windows.

`model.stencil_init` starts the `fd4_taps` stencils at given (φ, θ) rather than at FD4, and
`train.freeze_stencils` keeps them there (their gradient is zeroed; only the networks train).
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


def correlation(a: jax.Array, b: jax.Array) -> jax.Array:
    """Pearson correlation of `a` and `b` over their last `ndim` axes after axis 1: `(T, B, *grid,
    C)` pairs -> `(T, B)`."""
    axes = tuple(range(2, a.ndim))
    a = a - a.mean(axes, keepdims=True)
    b = b - b.mean(axes, keepdims=True)
    return (a * b).sum(axes) / jnp.sqrt((a * a).sum(axes) * (b * b).sum(axes) + 1e-12)


def window_loss(emulator: emulators.Emulator, params: Any, batch: dict, window: int,
                pushforward: int = 0, corr_weight: float = 0.0, remat: bool = False) -> jax.Array:
    """MSE (+ `corr_weight` · (1 − correlation)) between the rollout of `window` macro steps
    and the labels (BPTT).

    `batch`: {"u0": (B, *grid, C), "target": (B, ≥ pushforward + window, *grid, C)}. With
    `pushforward` = k the window starts from the model's own state after k steps from `u0`,
    held fixed (`stop_gradient`), and is compared with labels k + 1 … k + window.
    """
    u0 = batch["u0"]
    if pushforward:
        u0 = jax.lax.stop_gradient(emulator.rollout(params, u0, pushforward)[-1])
    pred = emulator.rollout(params, u0, window, remat)  # (window, B, *grid, C)
    target = jnp.swapaxes(batch["target"][:, pushforward:pushforward + window], 0, 1)
    loss = jnp.mean((pred - target) ** 2)
    if corr_weight:
        loss = loss + corr_weight * jnp.mean(1.0 - correlation(pred, target))
    return loss


def curriculum_loss(emulator: emulators.Emulator, params: Any, batch: dict, step: jax.Array,
                    num_steps: int, windows: tuple[int, ...], **kwargs) -> jax.Array:
    """`window_loss` over window `windows[i]` (target `(B, pushforward + max(windows), ...)`),
    phase `i = min(step · len(windows) // num_steps, len(windows) − 1)`: equal phases of the
    run. One branch runs per step (`lax.switch`), so early phases cost less. `kwargs` go to
    `window_loss`."""
    if len(windows) == 1:
        return window_loss(emulator, params, batch, windows[0], **kwargs)
    phase = jnp.minimum(step * len(windows) // num_steps, len(windows) - 1)
    branches = [lambda p, b, w=w: window_loss(emulator, p, b, w, **kwargs) for w in windows]
    return jax.lax.switch(phase, branches, params, batch)


def add_noise(u0: jax.Array, key: jax.Array, noise_std: float) -> jax.Array:
    """`u0 (B, *grid, C)` plus Gaussian noise of `noise_std` × each sample's RMS."""
    axes = tuple(range(1, u0.ndim))
    rms = jnp.sqrt(jnp.mean(u0 ** 2, axes, keepdims=True))
    return u0 + noise_std * rms * jax.random.normal(key, u0.shape, u0.dtype)


def initial_stencils(params: Any, model_config) -> Any:
    """`params` with the `fd4_taps` stencil parameters set to `model_config.stencil_init` = (φ, θ)
    (∂x FD4's + φ·[1, −2, 0, 2, −1], ∂xx FD4's + θ·[1, −4, 6, −4, 1]); unchanged when it is None."""
    if model_config.get("stencil_init") is None:
        return params
    phi, theta = model_config.stencil_init
    filters = params["params"]["filters"]
    set_to = {"first_order": phi, "second_order": theta}
    new = {k: jnp.full_like(v, set_to[k]) if k in set_to else v for k, v in filters.items()}
    return {**params, "params": {**params["params"], "filters": new}}


def freeze_stencils(grads: Any) -> Any:
    """`grads` with the stencil parameters' gradient zeroed (`params/filters/*`)."""
    filters = jax.tree.map(jnp.zeros_like, grads["params"]["filters"])
    return {**grads, "params": {**grads["params"], "filters": filters}}


def make_task(config, emulator: emulators.Emulator, train_data: np.ndarray) -> train_loop.Task:
    block, t = optim_block(config), config.train
    opt = optim.make_optimizer(block, t.num_steps)
    window, bs, seed = t.window, t.batch_size, t.seed
    windows = tuple(t.window_curriculum) or (window,)
    levers = dict(pushforward=t.pushforward, corr_weight=t.corr_weight, remat=t.remat)
    example = jnp.asarray(train_data[:1, 0])

    def init_state(key):
        return optim.init_state(initial_stencils(emulator.init(key, example), config.model), opt)

    def train_step(state, batch, key):
        if t.noise_std:
            batch = {**batch, "u0": add_noise(batch["u0"], key, t.noise_std)}
        loss, grads = jax.value_and_grad(curriculum_loss, argnums=1)(
            emulator, state["params"], batch, state["step"], t.num_steps, windows, **levers)
        if t.freeze_stencils:
            grads = freeze_stencils(grads)
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss, "grad_norm": optax.tree.norm(grads)})

    def batch_fn(step, rows):
        batch = data_lib.window_batch(train_data, step, seed, bs, window + t.pushforward)
        return {k: v[rows] for k, v in batch.items()}

    return train_loop.Task(init_state, train_step, batch_fn, bs,
                           learning_rate=optim.make_schedule(block, t.num_steps))
