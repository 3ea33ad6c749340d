"""The one optimiser block, the one in-graph fit and the one initial train state.

An `optim` block (a mapping or ConfigDict) holds

    name          "adam" | "adamw" | "sgd"
    lr            peak learning rate
    schedule      "constant" | "cosine": a linear warm-up from lr · warmup_from over
                  `warmup` steps (0: none), then lr held ("constant") or cosine-decayed
                  to lr · end_lr_factor at num_steps ("cosine")
    warmup        warm-up steps (cut to num_steps − 1)
    warmup_from   the rate the warm-up starts from, as a fraction of lr (default 0)
    end_lr_factor final rate / lr of "cosine"
    clip          global-norm gradient clipping, 0 = none
    weight_decay  AdamW's decoupled decay; SGD's L2 term added to the gradient
    b1, b2        Adam's betas;  momentum  SGD's

Missing keys take `DEFAULTS`; an unknown key or value is a ValueError naming it.
`OPTIM_RULES` are the schema rules of the block for a paper's config_schema.

The EMA of the parameters a train state carries beside them (`ema_update`, after each
optimiser update t = 1, 2, …):

    "exp"     ema ← β·ema + (1 − β)·params with a constant decay β
    "karras"  the power-function EMA of Karras et al. (EDM2): β_t = (1 − 1/t)^(γ+1), so
              β_1 = 0 (the average starts at the first updated parameters) and after t
              updates the parameters θ_i carry the weights (i^(γ+1) − (i−1)^(γ+1)) / t^(γ+1),
              i.e. about ∝ i^γ: a fixed fraction of the run, not a fixed number of steps
              (γ = 7 is EDM2's σ_rel = √(γ+1) / ((γ+2)·√(γ+3)) ≈ 0.099)
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import optax

from lib.common.config import Choice, Float, Int, Rule

DEFAULTS = {"name": "adamw", "lr": None, "schedule": "constant", "warmup": 0, "warmup_from": 0.0,
            "end_lr_factor": 0.0, "clip": 0.0, "weight_decay": 0.0, "b1": 0.9, "b2": 0.999,
            "momentum": 0.9}
NAMES = ("adam", "adamw", "sgd")
SCHEDULES = ("constant", "cosine")
EMA_KINDS = ("exp", "karras")


def optim_rules(prefix: str = "optim.") -> dict[str, Rule]:
    """Schema rules (lib.common.config) for the block's keys under `prefix`."""
    rules = {"name": Choice(NAMES), "lr": Float(lo=0.0, lo_open=True),
             "schedule": Choice(SCHEDULES), "warmup": Int(lo=0),
             "warmup_from": Float(lo=0.0, hi=1.0),
             "end_lr_factor": Float(lo=0.0, hi=1.0), "clip": Float(lo=0.0),
             "weight_decay": Float(lo=0.0), "b1": Float(lo=0.0, hi=1.0, hi_open=True),
             "b2": Float(lo=0.0, hi=1.0, hi_open=True),
             "momentum": Float(lo=0.0, hi=1.0, hi_open=True)}
    return {prefix + k: r for k, r in rules.items()}


def settings(block: Mapping | Any) -> dict:
    """`DEFAULTS` updated by `block`; ValueError naming an unknown key, a missing lr or a
    bad name/schedule."""
    given = dict(block.items())
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"optim block: unknown key(s) {unknown}; known: {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **given}
    if s["lr"] is None:
        raise ValueError("optim block: lr is missing")
    if s["name"] not in NAMES:
        raise ValueError(f"optim.name = {s['name']!r}; expected one of {NAMES}")
    if s["schedule"] not in SCHEDULES:
        raise ValueError(f"optim.schedule = {s['schedule']!r}; expected one of {SCHEDULES}")
    return s


def make_schedule(block: Mapping | Any, num_steps: int) -> optax.Schedule:
    """The learning rate as a function of the step (see the module docstring)."""
    s = settings(block)
    lr = s["lr"]
    warmup = min(s["warmup"], max(num_steps - 1, 0))
    if s["schedule"] == "constant":
        if not warmup:
            return optax.constant_schedule(lr)
        return optax.join_schedules([optax.linear_schedule(lr * s["warmup_from"], lr, warmup),
                                     optax.constant_schedule(lr)], [warmup])
    return optax.warmup_cosine_decay_schedule(lr * s["warmup_from"], lr, warmup, max(num_steps, 1),
                                              end_value=lr * s["end_lr_factor"])


def make_optimizer(block: Mapping | Any, num_steps: int) -> optax.GradientTransformation:
    """chain(clip_by_global_norm(clip), base) (no clip when clip = 0), base being
    optax.adam / optax.adamw(weight_decay) / chain(add_decayed_weights, sgd(momentum)) on
    `make_schedule(block, num_steps)`."""
    s = settings(block)
    sched = make_schedule(s, num_steps)
    if s["name"] == "adam":
        if s["weight_decay"]:
            raise ValueError(f"optim.name = 'adam' has no weight decay "
                             f"(weight_decay = {s['weight_decay']}); use 'adamw'")
        base = optax.adam(sched, b1=s["b1"], b2=s["b2"])
    elif s["name"] == "adamw":
        base = optax.adamw(sched, b1=s["b1"], b2=s["b2"], weight_decay=s["weight_decay"])
    else:
        base = optax.chain(optax.add_decayed_weights(s["weight_decay"]),
                           optax.sgd(sched, momentum=s["momentum"]))
    if s["clip"]:
        return optax.chain(optax.clip_by_global_norm(s["clip"]), base)
    return base


def karras_ema_weight(step: Any, gamma: float) -> jax.Array:
    """1 − β_t = 1 − (1 − 1/t)^(γ+1), the weight of update t's parameters in the "karras"
    EMA (float32; t < 1 counts as 1, weight 1). Computed as −expm1((γ+1)·log1p(−1/t)), which
    keeps its relative precision where 1 − β_t is far below float32's resolution near 1
    (≈ 4e-5 at t = 2·10⁵, γ = 7)."""
    t = jnp.maximum(jnp.asarray(step, jnp.float32), 1.0)
    return -jnp.expm1((gamma + 1.0) * jnp.log1p(-1.0 / t))


def ema_decay_at(step: Any, kind: str = "exp", decay: float = 0.0,
                 gamma: float = 7.0) -> Any:
    """β at update `step` (1 for the first update): `decay` for "exp", (1 − 1/t)^(γ+1) for
    "karras" (see the module docstring)."""
    if kind == "exp":
        return decay
    if kind == "karras":
        return 1.0 - karras_ema_weight(step, gamma)
    raise ValueError(f"ema kind {kind!r}; expected one of {EMA_KINDS}")


def ema_update(ema: Any, params: Any, step: Any, kind: str = "exp", decay: float = 0.0,
               gamma: float = 7.0) -> Any:
    """The EMA pytree after update number `step` (1-based) produced `params`.

    "exp": decay·ema + (1 − decay)·params, `decay` a Python float ("exp" with decay 0 keeps
    the EMA equal to the parameters). "karras": ema + w_t·(params − ema) with
    w_t = `karras_ema_weight(step, gamma)` (β_t = 1 − w_t), in each leaf's dtype, so a
    parameter that does not change leaves its EMA exactly where it is."""
    if kind == "exp":
        return jax.tree.map(lambda e, p: decay * e + (1 - decay) * p, ema, params)
    if kind == "karras":
        w = karras_ema_weight(step, gamma)
        return jax.tree.map(lambda e, p: (e + w * (p - e)).astype(e.dtype), ema, params)
    raise ValueError(f"ema kind {kind!r}; expected one of {EMA_KINDS}")


def init_state(params: Any, optimizer: optax.GradientTransformation) -> dict:
    """The train state {"params", "opt_state": optimizer.init(params), "step": int32 0}."""
    return {"params": params, "opt_state": optimizer.init(params), "step": jnp.int32(0)}


def descend(loss_fn: Callable, params: Any, opt_state: Any,
            optimizer: optax.GradientTransformation, steps: int, xs: Any = None,
            has_aux: bool = False):
    """`steps` updates of `optimizer` on `loss_fn` inside one `lax.scan`, continuing from
    `opt_state`: ((params, opt_state), losses (steps,)).

    loss_fn(params) -> scalar, or loss_fn(params, x) with x the step's slice of `xs` (a
    pytree with leading axis `steps`, e.g. per-step keys). With `has_aux`, loss_fn returns
    (loss, aux) and the trace is (losses, aux stacked over steps). The loss is the one at
    the parameters before the step's update.
    """
    grad = jax.value_and_grad(loss_fn, has_aux=has_aux)

    def step(carry, x):
        p, s = carry
        value, g = grad(p) if xs is None else grad(p, x)
        updates, s = optimizer.update(g, s, p)
        return (optax.apply_updates(p, updates), s), value

    return jax.lax.scan(step, (params, opt_state), xs, length=steps)


def minimize(loss_fn: Callable, params: Any, optimizer: optax.GradientTransformation,
             steps: int, xs: Any = None, has_aux: bool = False):
    """`descend` from `optimizer.init(params)`: (final params, losses (steps,))."""
    (params, _), losses = descend(loss_fn, params, optimizer.init(params), optimizer, steps,
                                  xs, has_aux)
    return params, losses
