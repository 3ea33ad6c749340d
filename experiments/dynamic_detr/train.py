"""Dynamic token aggregation vs dense / top-k / foreground-selection DETR encoders.

1. Train the dense detector (`train.num_steps`) on freshly rendered images every step.
2. From that checkpoint fine-tune every variant for `sparse.finetune_steps`: the dense
   encoder itself (so all rows have the same number of updates), top-k, focus and dynamic
   at each budget in `sparse.budgets`, and each dynamic ablation at `sparse.ablation_budget`.
   Dynamic runs use the frozen dense checkpoint as the teacher of the centre-distance term.
3. Evaluate each on the same held-out images: COCO AP (pycocotools), encoder FLOPs (XLA
   cost analysis) and encoder throughput; write results.json, results.md, plots/ap_vs_flops.png.

Every stage is a `lib.common.train_loop.train` run in `<workdir>/runs/<name>` (checkpoints,
resume); a rerun of the same command resumes or skips finished stages. With
`run.time_budget_s` set, every stage stops at the next step (with a checkpoint) once its
share of the wall-clock budget is spent (`run_stage` on the harness deadline, `finetune_deadline`);
the steps each stage got and whether the budget stopped it are recorded in results.json
("stages"). A rerun continues every stage from its checkpoint toward its configured steps;
it may change the budget (the `run` block is not part of the workdir's config identity).
"""
from __future__ import annotations

import dataclasses
import functools
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import extras
from lib.common import config as config_lib, mesh as mesh_lib, report, train_loop
from lib.common import guards, workdir as wd
from lib.detection import coco
from lib.dynamic_detr import data, evaluate, objectives, precompile, prefetch, reporting
from lib.dynamic_detr.config_schema import validate
from lib.dynamic_detr.data import CLASSES
from lib.dynamic_detr.model import Detector, token_layout
from lib.dynamic_detr.spec import EncoderSpec, make_spec
from lib.dynamic_detr.config_schema import optional_modules


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
    if s.compare_holistic_kept:           # the earlier holistic design, as a design comparison
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
    base = config.optim.finetune_warmup if init_params is not None else config.optim.warmup
    warmup = min(base, steps // 4 + 1)
    warmup = warmup if warmup < steps else 0                 # a 1-step run: no warm-up
    if config.optim.schedule == "cosine":
        sched = optax.warmup_cosine_decay_schedule(0.0, lr, warmup, steps, end_value=lr * 0.05)
    else:                                 # warm-up, then constant: a budget may stop it anywhere
        sched = optax.join_schedules([optax.linear_schedule(0.0, lr, max(warmup, 1)),
                                      optax.constant_schedule(lr)], [max(warmup, 1)])
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


def finetune_task(config, v: Variant, dense_params, batches=None) -> train_loop.Task:
    """The fine-tune task of variant `v` from `dense_params` (also the centre-distance
    teacher when `v.cd`)."""
    return make_task(config, v.spec, init_params=dense_params,
                     teacher=dense_params if v.cd else None, lr=config.optim.finetune_lr,
                     steps=config.sparse.finetune_steps, batches=batches)


def start_precompile(config, workdir: str, mesh) -> precompile.Precompiler:
    """`run.precompile`: turn the persistent compilation cache on (`run.compile_cache_dir`,
    default `<workdir>/xla_cache`) and compile every fine-tune stage's train step in a
    background thread (placeholder zero parameters: a step depends on their shapes only)."""
    precompile.enable_cache(config.run.compile_cache_dir or os.path.join(workdir, "xla_cache"))
    size = config.data.image_size
    zeros = jax.tree.map(jnp.zeros_like, jax.eval_shape(
        detector(config).init, jax.random.key(0), jnp.zeros((1, size, size, 3))))
    return precompile.Precompiler({v.name: finetune_task(config, v, zeros) for v in variants(config)},
                                  mesh, config.train.seed)


def _loop(config, steps: int) -> train_loop.LoopConfig:
    t = config.train
    return train_loop.LoopConfig(num_steps=steps, log_every=t.log_every,
                                 checkpoint_every=min(t.checkpoint_every, steps),
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)


def run_stage(task, config, steps: int, directory: str, mesh, deadline: float | None,
              clock=time.time):
    """Train one stage toward `steps` in `directory` (resuming its checkpoints), stopping
    at the step boundary the harness deadline predicts (`train_loop.train(deadline=...)`:
    the next step would end after `deadline`, a `clock()` value; None: no budget). A rerun
    resumes the stage from its checkpoint toward `steps`.

    Returns (TrainResult, record = {"steps", "target_steps", "stopped_by_budget",
    "resumed_from", "train_s", "steps_per_s"}); a SIGTERM raises `guards.Preempted`.
    """
    os.makedirs(directory, exist_ok=True)
    t0 = time.time()
    r = train_loop.train(task, _loop(config, steps), workdir=directory, mesh=mesh,
                         deadline=deadline, clock=clock)
    took = time.time() - t0
    return r, {"steps": int(r.step), "target_steps": int(steps),
               "stopped_by_budget": bool(r.stopped_by_deadline),
               "resumed_from": int(r.resumed_from), "train_s": took,
               "steps_per_s": (r.step - r.resumed_from) / took if took > 0 else 0.0}


def _deadlines(config, start: float):
    """(end of the whole budget, end of pre-training) as time.time() values, or Nones."""
    budget = config.run.time_budget_s
    if budget is None:
        return None, None
    return start + budget, start + config.run.pretrain_fraction * budget


def finetune_deadline(end: float | None, now: float, left: int, eval_s: float) -> float | None:
    """A fine-tune's training deadline: an equal share of the time left to the `left`
    stages still to run, less the expected evaluation time `eval_s`."""
    if end is None:
        return None
    return now + (end - now) / left - eval_s


def finetune_fits(end: float | None, now: float, eval_s: float) -> bool:
    """Whether a fine-tune may start: no budget, or time for at least its compile and its
    evaluation (taken as 2 × the last evaluation's duration) is left before `end`."""
    return end is None or now + 2 * eval_s < end


def train_and_evaluate(config, workdir: str):
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    with prefetch.Prefetcher(config.data.workers, 4 * config.data.workers,
                             seed=config.train.seed, count=config.data.batch_size,
                             **data_kwargs(config)) as batches:
        return _train_and_evaluate(config, workdir, batches)


def _train_and_evaluate(config, workdir: str, batches):
    start = time.time()
    end, pre_end = _deadlines(config, start)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    # the `run` block (wall-clock budget, precompile) says how long / how to run, not what to
    # compute: `wd.prepare` stores it but leaves it out of the identity, so a rerun may change
    # it (also recorded in results.json["budget"]). sparse.holistic / compare_holistic_kept
    # were added after the first runs: a workdir made before them ran the "kept" design
    # without the comparison row
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary,
               added={"sparse.holistic": "kept", "sparse.compare_holistic_kept": False})
    runs_dir = os.path.join(workdir, "runs")
    pre = start_precompile(config, workdir, mesh) if config.run.precompile else None

    dense_task = make_task(config, EncoderSpec(), lr=config.optim.lr, steps=config.train.num_steps,
                           batches=batches)
    res, pre_record = run_stage(dense_task, config, config.train.num_steps,
                                os.path.join(runs_dir, "pretrain"), mesh, pre_end)
    dense_params = jax.device_get(res.state["params"])

    val = data.batch([config.train.seed, 11], config.data.val_images, **data_kwargs(config))
    gt = coco.from_arrays(val["boxes_xyxy"], val["labels"], val["valid"], height=config.data.image_size,
                          width=config.data.image_size, category_names=CLASSES[:config.data.num_classes])
    pre_ap = evaluate.average_precision(detector(config), dense_params, val, gt,
                                        batch_size=config.eval.batch_size,
                                        area_scale=config.eval.area_scale)
    n = sum(s * s for s in token_layout(config.data.image_size, len(config.model.widths))[3])
    rows, todo = [], variants(config)
    stages = {"pretrain": pre_record}
    eval_s = config.run.eval_reserve_s

    def write(results):
        guards.check_preempted("writing results.json")
        if primary:                       # after every stage, so a killed run can still be read
            if config.eval.plots and rows:
                reporting.plot(rows, os.path.join(workdir, "plots", "ap_vs_flops.png"))
            wd.write_text_atomic(os.path.join(workdir, "results.md"), reporting.tables(results) + "\n")
            wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)

    def summary():
        return {"rows": rows, "pretrained_dense": pre_ap, "tokens": n,
                "complete": len(rows) == len(todo), "missing": [t.name for t in todo[len(rows):]],
                "targets": reporting.targets(rows, tuple(config.sparse.budgets),
                                             tuple(config.sparse.ablations)),
                "stages": stages,
                "budget": {**config_lib.to_json_dict(config)["run"],
                           "stopped_by_budget": sorted(k for k, v in stages.items()
                                                       if v["stopped_by_budget"])},
                "machine": report.machine(), "wall_s": time.time() - start}

    results = summary()
    write(results)
    for i, v in enumerate(todo):
        guards.check_preempted(f"fine-tune {v.name}")
        task = finetune_task(config, v, dense_params, batches)
        compiled_s = pre.wait(v.name) if pre is not None else None
        deadline = finetune_deadline(end, time.time(), len(todo) - i, eval_s)
        if not finetune_fits(end, time.time(), eval_s):
            print(f"time budget spent: {', '.join(t.name for t in todo[i:])} not run", flush=True)
            break
        r, stages[v.name] = run_stage(task, config, config.sparse.finetune_steps,
                                      os.path.join(runs_dir, v.name), mesh, deadline)
        t_eval = time.time()
        params = jax.device_get(r.state["params"])
        det = detector(config, v.spec)
        ap = evaluate.average_precision(det, params, val, gt, batch_size=config.eval.batch_size,
                                        area_scale=config.eval.area_scale)
        cost = evaluate.encoder_cost(det, params, config.data.image_size,
                                     batch=config.eval.throughput_batch,
                                     repeats=config.eval.throughput_repeats)
        eval_s = time.time() - t_eval     # the next share leaves room for an evaluation this long
        stages[v.name]["eval_s"] = eval_s
        if compiled_s is not None:
            stages[v.name]["precompile_s"] = compiled_s
        counts = v.spec.counts(n, config.model.enc_layers)
        rows.append({"name": v.name, "method": v.method, "budget": v.budget, "ablation": v.ablation,
                     "tokens_per_block": list(counts), "mean_keep": float(np.mean(counts) / n),
                     "finetune_steps": stages[v.name]["steps"], **ap, **cost})
        print(f"{v.name}: {stages[v.name]['steps']} steps, AP {ap['AP']:.3f} AP50 {ap['AP50']:.3f} "
              f"encoder {cost['encoder_gflops'] * 1e3:.2f} MFLOPs {cost['images_per_s']:.0f} img/s",
              flush=True)
        results = summary()
        write(results)
    return results
