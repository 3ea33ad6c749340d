"""The experiment's variants and their train tasks (dense pre-training and fine-tunes).

`variants(config)` lists the fine-tuned rows in run order; `make_task` builds one stage's
`train_loop.Task` (AdamW with warm-up; the centre-distance term needs the frozen dense
`teacher`); `make_finetune_task` is the fine-tune of one variant from the dense parameters.
"""
from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from lib.common import optim, train_loop
from lib.dynamic_detr import objectives, prefetch
from lib.dynamic_detr.model import Detector, token_layout
from lib.dynamic_detr.spec import EncoderSpec, make_spec


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    method: str
    budget: float
    ablation: str
    spec: EncoderSpec
    cd: bool          # centre-distance term on (needs a teacher)


def variants(config) -> list[Variant]:
    """The fine-tuned variants of the experiment, in table order."""
    m, s = config.model, config.sparse
    kw = dict(num_blocks=m.enc_layers, num_levels=len(m.widths), cascade=tuple(s.cascade),
              focus_level_weights=tuple(s.focus_level_weights), fine_levels=s.fine_levels,
              temperature=s.temperature, holistic=s.holistic)
    def at(b):
        return [Variant(f"{meth}_{b:g}", meth, b, "none", make_spec(meth, b, **kw),
                        meth == "dynamic" and config.loss.cd > 0) for meth in s.methods]

    ablations = [Variant(f"dynamic_{a}_{s.ablation_budget:g}", "dynamic", s.ablation_budget, a,
                         make_spec("dynamic", s.ablation_budget, ablation=a, **kw),
                         a != "no_center_distance" and config.loss.cd > 0) for a in s.ablations]
    if s.compare_holistic_kept:           # the "kept" holistic design, as a design comparison
        ablations.append(Variant(f"dynamic_holistic_kept_{s.ablation_budget:g}", "dynamic",
                                 s.ablation_budget, "holistic_kept",
                                 make_spec("dynamic", s.ablation_budget, **{**kw, "holistic": "kept"}),
                                 config.loss.cd > 0))
    # run order (what a cut-short run has measured): the comparison at every budget, then
    # the ablations (and the holistic design comparison)
    out = [Variant("dense", "dense", 1.0, "none", EncoderSpec(), False)]
    for b in s.budgets:
        out += at(b)
    out += ablations
    return out


def detector(config, spec: EncoderSpec = EncoderSpec()) -> Detector:
    m = config.model
    return Detector(config.data.image_size, config.data.num_classes, tuple(m.widths), m.dim,
                    m.heads, m.enc_layers, m.dec_layers, m.num_queries, spec)


def data_kwargs(config) -> dict:
    d = config.data
    return dict(size=d.image_size, num_classes=d.num_classes, min_objects=d.min_objects,
                max_objects=d.max_objects, min_scale=d.min_scale, max_scale=d.max_scale)


def make_task(config, spec: EncoderSpec, *, init_params=None, teacher=None, lr: float,
              steps: int, batches=None) -> train_loop.Task:
    """The train task of one stage; `init_params` (fine-tuning) replaces the random init.
    `batches` (step -> batch dict, e.g. a `prefetch.Prefetcher`) defaults to rendering the
    step's batch in this process; both give `prefetch.train_batch(step, ...)`."""
    det = detector(config, spec)
    dense = detector(config)
    centre = jnp.asarray(token_layout(config.data.image_size, len(config.model.widths))[1])
    base = config.optim.finetune.warmup if init_params is not None else config.optim.warmup
    warmup = min(base, steps // 4 + 1)
    # "constant": warm-up, then constant (a time budget may stop the stage anywhere)
    opt = optim.make_optimizer(dict(name="adamw", lr=lr, schedule=config.optim.schedule,
                                    warmup=warmup, end_lr_factor=0.05, clip=config.optim.clip,
                                    weight_decay=config.optim.weight_decay), steps)
    w = {k: float(config.loss[k]) for k in ("class", "l1", "giou", "obj", "cd")}
    if teacher is None:
        w["cd"] = 0.0
    bs = config.data.batch_size
    size = config.data.image_size

    def init_state(key):
        params = (init_params if init_params is not None
                  else det.init(key, jnp.zeros((1, size, size, 3))))
        state = optim.init_state(params, opt)
        if teacher is not None:
            state["teacher"] = teacher
        return state

    def train_step(state, batch, key):
        del key
        t_mem = None
        if teacher is not None:
            t_mem = jax.lax.stop_gradient(dense.apply(state["teacher"], batch["images"])["memory"])

        def loss_fn(p):
            out = det.apply(p, batch["images"])
            return objectives.detection_loss(out, batch, centre, w, t_mem,
                                            matcher=config.loss.matcher)

        (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["params"])
        return train_loop.apply_gradients(state, grads, opt), {"loss": loss, **parts}

    render = batches if batches is not None else functools.partial(
        prefetch.train_batch, seed=config.train.seed, count=bs, **data_kwargs(config))

    def batch_fn(step, rows):
        b = render(step)
        return {k: b[k][rows] for k in ("images", "boxes", "labels", "valid")}

    return train_loop.Task(init_state, train_step, batch_fn, bs)


def make_finetune_task(config, v: Variant, dense_params, batches=None) -> train_loop.Task:
    """The fine-tune task of variant `v` from `dense_params` (also the centre-distance
    teacher when `v.cd`)."""
    return make_task(config, v.spec, init_params=dense_params,
                     teacher=dense_params if v.cd else None, lr=config.optim.finetune.lr,
                     steps=config.sparse.finetune_steps, batches=batches)


def zero_params(config):
    """Placeholder dense parameters (zeros of the right shapes): a compiled train step
    depends on their shapes only."""
    size = config.data.image_size
    return jax.tree.map(jnp.zeros_like, jax.eval_shape(
        detector(config).init, jax.random.key(0), jnp.zeros((1, size, size, 3))))
