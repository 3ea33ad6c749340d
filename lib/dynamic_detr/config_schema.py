"""What a dynamic_detr experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/dynamic_detr file states only what
differs, through `config(overrides)`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Ints, Key, Names, Optional, Str)

CLASSES = ("circle", "square", "triangle", "ring", "bar", "cross")
METHODS = ("dense", "topk", "focus", "dynamic")
HOLISTIC = ("context", "kept")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"CLASSES": "lib.dynamic_detr.data:CLASSES", "METHODS": "lib.dynamic_detr.spec:METHODS",
           "HOLISTIC": "lib.dynamic_detr.spec:HOLISTIC"}
ABLATIONS = ("no_density", "no_proximal", "no_holistic", "no_rescore", "no_center_distance",
             "no_unmerge", "no_aggregation")

KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=100, checkpoint_every=1000,
                                        keep_checkpoints=2),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "data.image_size": Key(32, Int(lo=16, hi=2048)),
    "data.num_classes": Key(4, Int(lo=1, hi=len(CLASSES))),
    "data.min_objects": Key(1, Int(lo=1)),
    "data.max_objects": Key(3, Int(lo=1, hi=100)),
    "data.min_scale": Key(5, Float(lo=2.0)),
    "data.max_scale": Key(16, Float(lo=2.0)),
    "data.batch_size": Key(16, Int(lo=1)),
    "data.val_images": Key(500, Int(lo=1)),
    "data.workers": Key(0, Int(lo=0, hi=64)),
    "data.prefetch_per_worker": Key(4, Int(lo=1), before=4),   # batches rendered ahead per worker
    "model.widths": Key((16, 32, 48), Ints(lo=1)),
    "model.dim": Key(48, Int(lo=4)),
    "model.heads": Key(4, Int(lo=1)),
    "model.enc_layers": Key(3, Int(lo=1, hi=12)),
    "model.dec_layers": Key(3, Int(lo=1, hi=12)),
    "model.num_queries": Key(16, Int(lo=1)),
    "loss.class": Key(2.0, Float(lo=0.0)),
    "loss.l1": Key(5.0, Float(lo=0.0)),
    "loss.giou": Key(2.0, Float(lo=0.0)),
    "loss.obj": Key(1.0, Float(lo=0.0)),
    "loss.cd": Key(1.0, Float(lo=0.0)),
    # matcher: "scipy" (host callback, lib.detection.matching.assign) or "jax" (in-graph,
    # lib.detection.assignment.assign_jax: no callback, so the persistent compile cache works)
    "loss.matcher": Key("scipy", Choice(("scipy", "jax"))),
    "optim.lr": Key(1e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.finetune.lr": Key(2e-4, Float(lo=0.0, lo_open=True, hi=1.0), was="optim.finetune_lr"),
    "optim.weight_decay": Key(1e-4, Float(lo=0.0)),
    "optim.clip": Key(0.5, Float(lo=0.0, lo_open=True)),
    "optim.warmup": Key(REQUIRED, Int(lo=0)),
    "optim.finetune.warmup": Key(REQUIRED, Int(lo=0), was="optim.finetune_warmup"),
    "optim.schedule": Key("cosine", Choice(("cosine", "constant"))),
    # wall-clock budget (None = off): pre-training stops at the next step after
    # pretrain_fraction of it, each fine-tune after an equal share of what is left minus
    # the expected evaluation time (eval_reserve_s before the first one is measured)
    # precompile: compile every fine-tune's train step in a background thread during
    # pre-training, into JAX's persistent cache (compile_cache_dir, default <workdir>/xla_cache),
    # so a stage's own compile is a cache read (needs matcher "jax")
    "run.time_budget_s": Key(None, Optional(Float(lo=0.0, lo_open=True))),
    "run.pretrain_fraction": Key(0.4, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "run.eval_reserve_s": Key(20.0, Float(lo=0.0)),
    "run.precompile": Key(False, Bool()),
    "run.compile_cache_dir": Key(None, Optional(Str(allow_empty=False))),
    "sparse.finetune_steps": Key(REQUIRED, Int(lo=1)),
    "sparse.methods": Key(("topk", "focus", "dynamic"),
                         Names(tuple(m for m in METHODS if m != "dense"))),
    "sparse.budgets": Key((0.25, 0.5), Floats(lo=0.0, hi=1.0, lo_open=True, increasing=True)),
    "sparse.ablations": Key(("no_density", "no_proximal", "no_holistic", "no_rescore",
                             "no_center_distance"), Names(ABLATIONS, allow_empty=True)),
    "sparse.ablation_budget": Key(0.25, Float(lo=0.0, hi=1.0, lo_open=True)),
    "sparse.cascade": Key((1.3, 1.0, 0.7), Floats(lo=0.0, lo_open=True)),
    "sparse.focus_level_weights": Key((1.0, 1.5, 2.0), Floats(lo=0.0, lo_open=True)),
    "sparse.fine_levels": Key(1, Int(lo=0)),
    "sparse.temperature": Key(0.1, Float(lo=0.0, lo_open=True)),
    # holistic aggregation of the coarse levels: "context" (dropped tokens pooled into one
    # context slot per level) or "kept" (spread over the kept tokens);
    # compare_holistic_kept adds a row with "kept" at ablation_budget
    "sparse.holistic": Key("context", Choice(HOLISTIC)),
    "sparse.compare_holistic_kept": Key(False, Bool()),
    "eval.batch_size": Key(100, Int(lo=1)),
    # (data.image_size / 256)²: scales COCO's small / medium / large area ranges
    "eval.area_scale": Key((32 / 256) ** 2, Float(lo=0.0, lo_open=True)),
    "eval.throughput_batch": Key(32, Int(lo=1)),
    "eval.throughput_repeats": Key(5, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
}
RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare


config = config_lib.config_builder(KEYS, "lib/dynamic_detr/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    del config
    return [("pycocotools", "detection", "COCO AP evaluation")]
