"""What a dynamic_detr experiment config may hold, and the checks run before any compute."""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (Bool, Choice, ConfigError, Float, Floats, Int, Ints, Names, Optional,
                               Rule, Str)
from lib.dynamic_detr.data import CLASSES
from lib.dynamic_detr.spec import HOLISTIC, METHODS

ABLATIONS = ("no_density", "no_proximal", "no_holistic", "no_rescore", "no_center_distance",
             "no_unmerge", "no_aggregation")

SCHEMA: dict[str, Rule] = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "data.image_size": Int(lo=16, hi=2048),
    "data.num_classes": Int(lo=1, hi=len(CLASSES)),
    "data.min_objects": Int(lo=1),
    "data.max_objects": Int(lo=1, hi=100),
    "data.min_scale": Float(lo=2.0),
    "data.max_scale": Float(lo=2.0),
    "data.batch_size": Int(lo=1),
    "data.val_images": Int(lo=1),
    "data.workers": Int(lo=0, hi=64),
    "model.widths": Ints(lo=1),
    "model.dim": Int(lo=4),
    "model.heads": Int(lo=1),
    "model.enc_layers": Int(lo=1, hi=12),
    "model.dec_layers": Int(lo=1, hi=12),
    "model.num_queries": Int(lo=1),
    "loss.class": Float(lo=0.0),
    "loss.l1": Float(lo=0.0),
    "loss.giou": Float(lo=0.0),
    "loss.obj": Float(lo=0.0),
    "loss.cd": Float(lo=0.0),
    "loss.matcher": Choice(("scipy", "jax")),
    "optim.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.finetune_lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.weight_decay": Float(lo=0.0),
    "optim.clip": Float(lo=0.0, lo_open=True),
    "optim.warmup": Int(lo=0),
    "optim.finetune_warmup": Int(lo=0),
    "optim.schedule": Choice(("cosine", "constant")),
    "run.time_budget_s": Optional(Float(lo=0.0, lo_open=True)),
    "run.pretrain_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "run.eval_reserve_s": Float(lo=0.0),
    "run.precompile": Bool(),
    "run.compile_cache_dir": Optional(Str(allow_empty=False)),
    "sparse.finetune_steps": Int(lo=1),
    "sparse.methods": Names(tuple(m for m in METHODS if m != "dense")),
    "sparse.budgets": Floats(lo=0.0, hi=1.0, lo_open=True, increasing=True),
    "sparse.ablations": Names(ABLATIONS, allow_empty=True),
    "sparse.ablation_budget": Float(lo=0.0, hi=1.0, lo_open=True),
    "sparse.cascade": Floats(lo=0.0, lo_open=True),
    "sparse.focus_level_weights": Floats(lo=0.0, lo_open=True),
    "sparse.fine_levels": Int(lo=0),
    "sparse.temperature": Float(lo=0.0, lo_open=True),
    "sparse.holistic": Choice(HOLISTIC),
    "sparse.compare_holistic_kept": Bool(),
    "eval.batch_size": Int(lo=1),
    "eval.area_scale": Float(lo=0.0, lo_open=True),
    "eval.throughput_batch": Int(lo=1),
    "eval.throughput_repeats": Int(lo=1),
    "eval.plots": Bool(),
}


def _check_cross(c: ml_collections.ConfigDict) -> None:
    def bad(key, value, why):
        raise ConfigError(f"config key {key!r} = {value!r} is not allowed; {why}")

    levels = len(c.model.widths)
    if c.data.image_size % (4 * 2 ** (levels - 1)):
        bad("data.image_size", c.data.image_size,
            f"it must be divisible by {4 * 2 ** (levels - 1)} for {levels} backbone levels")
    if c.data.min_objects > c.data.max_objects:
        bad("data.min_objects", c.data.min_objects, f"it exceeds data.max_objects = {c.data.max_objects}")
    if c.data.max_objects > c.model.num_queries:
        bad("data.max_objects", c.data.max_objects, f"it exceeds model.num_queries = {c.model.num_queries}")
    if c.data.min_scale > c.data.max_scale or c.data.max_scale > c.data.image_size:
        bad("data.max_scale", c.data.max_scale, "need min_scale <= max_scale <= image_size")
    if c.model.dim % 4 or c.model.dim % c.model.heads:
        bad("model.dim", c.model.dim, f"it must be a multiple of 4 and of model.heads = {c.model.heads}")
    if len(c.sparse.cascade) != c.model.enc_layers:
        bad("sparse.cascade", tuple(c.sparse.cascade), f"need one factor per encoder layer ({c.model.enc_layers})")
    if abs(sum(c.sparse.cascade) / len(c.sparse.cascade) - 1.0) > 1e-6:
        bad("sparse.cascade", tuple(c.sparse.cascade), "its mean must be 1 (equal mean token budget)")
    if any(b > a for a, b in zip(c.sparse.cascade, c.sparse.cascade[1:])):
        bad("sparse.cascade", tuple(c.sparse.cascade), "factors must not grow with depth")
    if len(c.sparse.focus_level_weights) != levels:
        bad("sparse.focus_level_weights", tuple(c.sparse.focus_level_weights), f"need one weight per level ({levels})")
    if c.sparse.fine_levels > levels:
        bad("sparse.fine_levels", c.sparse.fine_levels, f"at most the {levels} levels")
    if max(c.sparse.budgets) * max(c.sparse.cascade) > 1.0 + 1e-9:
        bad("sparse.budgets", tuple(c.sparse.budgets), "budget × largest cascade factor must be <= 1")
    if c.sparse.compare_holistic_kept and c.sparse.holistic == "kept":
        bad("sparse.compare_holistic_kept", True, "the full method already uses sparse.holistic = 'kept'")
    if c.sparse.compare_holistic_kept and "dynamic" not in c.sparse.methods:
        bad("sparse.compare_holistic_kept", True, "it needs 'dynamic' in sparse.methods")
    if c.sparse.ablations and "dynamic" not in c.sparse.methods:
        bad("sparse.ablations", tuple(c.sparse.ablations), "ablations need 'dynamic' in sparse.methods")
    if c.run.time_budget_s is not None and c.optim.schedule != "constant":
        bad("optim.schedule", c.optim.schedule, "a run with run.time_budget_s needs the 'constant' "
            "schedule (a cosine cut short by the budget would never decay)")
    if c.run.precompile and c.loss.matcher != "jax":
        bad("run.precompile", True, "it needs loss.matcher = 'jax' (JAX does not cache steps with "
            "the scipy host callback)")
    if c.data.batch_size % max(c.mesh.data, 1):
        bad("data.batch_size", c.data.batch_size, f"it must be divisible by mesh.data = {c.mesh.data}")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    del config
    return [("pycocotools", "detection", "COCO AP evaluation")]
