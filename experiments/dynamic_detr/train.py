"""Dynamic token aggregation vs dense / top-k / foreground-selection DETR encoders.

1. Train the dense detector (`train.num_steps`) on freshly rendered images every step.
2. From that checkpoint fine-tune every variant for `sparse.finetune_steps`: the dense
   encoder itself (so all rows have the same number of updates), top-k, focus and dynamic
   at each budget in `sparse.budgets`, and each dynamic ablation at `sparse.ablation_budget`.
   Dynamic runs use the frozen dense checkpoint as the teacher of the centre-distance term.
3. Evaluate each on the same held-out images: COCO AP (pycocotools), encoder FLOPs (XLA
   cost analysis) and encoder throughput; write results.json, results.md, plots/ap_vs_flops.png.

Every stage is a `lib.common.train_loop.train` run in `<workdir>/runs/<name>` (checkpoints,
resume); a rerun of the same command resumes or skips finished stages.
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import config as config_lib, mesh as mesh_lib, report, train_loop
from lib.common import workdir as wd
from lib.detection import coco
from lib.dynamic_detr import data, evaluate, objectives, reporting
from lib.dynamic_detr.config_schema import validate
from lib.dynamic_detr.data import CLASSES
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
              temperature=s.temperature)
    def at(b):
        return [Variant(f"{meth}_{b:g}", meth, b, "none", make_spec(meth, b, **kw),
                        meth == "dynamic" and config.loss.cd > 0) for meth in s.methods]

    ablations = [Variant(f"dynamic_{a}_{s.ablation_budget:g}", "dynamic", s.ablation_budget, a,
                         make_spec("dynamic", s.ablation_budget, ablation=a, **kw),
                         a != "no_center_distance" and config.loss.cd > 0) for a in s.ablations]
    # run order: the ablation budget's comparison and its ablations first, then other budgets
    first = [b for b in s.budgets if abs(b - s.ablation_budget) < 1e-9]
    rest = [b for b in s.budgets if abs(b - s.ablation_budget) >= 1e-9]
    out = [Variant("dense", "dense", 1.0, "none", EncoderSpec(), False)]
    for b in first:
        out += at(b)
    out += ablations
    for b in rest:
        out += at(b)
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
              steps: int) -> train_loop.Task:
    """The train task of one stage; `init_params` (fine-tuning) replaces the random init."""
    det = detector(config, spec)
    dense = detector(config)
    centre = jnp.asarray(token_layout(config.data.image_size, len(config.model.widths))[1])
    warmup = min(config.optim.warmup, steps // 4 + 1)
    warmup = warmup if warmup < steps else 0                 # a 1-step run: no warm-up
    sched = optax.warmup_cosine_decay_schedule(0.0, lr, warmup, steps, end_value=lr * 0.05)
    opt = optax.chain(optax.clip_by_global_norm(config.optim.clip),
                      optax.adamw(sched, weight_decay=config.optim.weight_decay))
    w = {k: float(config.loss[k]) for k in ("class", "l1", "giou", "obj", "cd")}
    if teacher is None:
        w["cd"] = 0.0
    bs = config.data.batch_size
    size = config.data.image_size

    def init_state(key):
        params = (init_params if init_params is not None
                  else det.init(key, jnp.zeros((1, size, size, 3))))
        state = {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}
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
            return objectives.detection_loss(out, batch, centre, w, t_mem)

        (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["params"])
        return train_loop.apply_gradients(state, grads, opt), {"loss": loss, **parts}

    def batch_fn(step, rows):
        b = data.batch([config.train.seed, 7, step], bs, **data_kwargs(config))
        return {k: b[k][rows] for k in ("images", "boxes", "labels", "valid")}

    return train_loop.Task(init_state, train_step, batch_fn, bs)


def _loop(config, steps: int) -> train_loop.LoopConfig:
    t = config.train
    return train_loop.LoopConfig(num_steps=steps, log_every=t.log_every,
                                 checkpoint_every=min(t.checkpoint_every, steps),
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)


def _run(task, cfg, directory, mesh):
    os.makedirs(directory, exist_ok=True)
    return train_loop.train(task, cfg, workdir=directory, mesh=mesh)


def train_and_evaluate(config, workdir: str):
    validate(config)
    start = time.time()
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    runs_dir = os.path.join(workdir, "runs")

    dense_task = make_task(config, EncoderSpec(), lr=config.optim.lr, steps=config.train.num_steps)
    res = _run(dense_task, _loop(config, config.train.num_steps), os.path.join(runs_dir, "pretrain"), mesh)
    if res.preempted:
        return res
    dense_params = jax.device_get(res.state["params"])

    val = data.batch([config.train.seed, 11], config.data.val_images, **data_kwargs(config))
    gt = coco.from_arrays(val["boxes_xyxy"], val["labels"], val["valid"], height=config.data.image_size,
                          width=config.data.image_size, category_names=CLASSES[:config.data.num_classes])
    pre_ap = evaluate.average_precision(detector(config), dense_params, val, gt,
                                        batch_size=config.eval.batch_size,
                                        area_scale=config.eval.area_scale)
    n = sum(s * s for s in token_layout(config.data.image_size, len(config.model.widths))[3])
    rows, todo = [], variants(config)
    for v in todo:
        task = make_task(config, v.spec, init_params=dense_params,
                         teacher=dense_params if v.cd else None, lr=config.optim.finetune_lr,
                         steps=config.sparse.finetune_steps)
        r = _run(task, _loop(config, config.sparse.finetune_steps), os.path.join(runs_dir, v.name), mesh)
        if r.preempted:
            return r
        params = jax.device_get(r.state["params"])
        det = detector(config, v.spec)
        ap = evaluate.average_precision(det, params, val, gt, batch_size=config.eval.batch_size,
                                        area_scale=config.eval.area_scale)
        cost = evaluate.encoder_cost(det, params, config.data.image_size,
                                     batch=config.eval.throughput_batch,
                                     repeats=config.eval.throughput_repeats)
        counts = v.spec.counts(n, config.model.enc_layers)
        rows.append({"name": v.name, "method": v.method, "budget": v.budget, "ablation": v.ablation,
                     "tokens_per_block": list(counts), "mean_keep": float(np.mean(counts) / n),
                     **ap, **cost})
        print(f"{v.name}: AP {ap['AP']:.3f} AP50 {ap['AP50']:.3f} "
              f"encoder {cost['encoder_gflops'] * 1e3:.2f} MFLOPs {cost['images_per_s']:.0f} img/s", flush=True)
        results = {"rows": rows, "pretrained_dense": pre_ap, "tokens": n,
                   "complete": len(rows) == len(todo),
                   "missing": [t.name for t in todo[len(rows):]],
                   "targets": reporting.targets(rows, tuple(config.sparse.budgets)),
                   "machine": report.machine(), "wall_s": time.time() - start}
        if primary:                       # after every variant, so a long run can be read early
            if config.eval.plots:
                reporting.plot(rows, os.path.join(workdir, "plots", "ap_vs_flops.png"))
            with open(os.path.join(workdir, "results.md"), "w") as f:
                f.write(reporting.tables(results) + "\n")
            wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    return results
