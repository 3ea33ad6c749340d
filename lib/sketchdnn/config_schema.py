"""What a SketchDNN experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/sketchdnn file states only what
differs, through `config(overrides)`.

Blocks: `train`/`mesh` (harness; `train.num_steps` is the step count of every diffusion
model; `train.seed` the model's init and batches, `seed` the data, encoder and sampling
keys), `data` (generator or SketchGraphs file, slot count, sizes), `diffusion` (T, loss
weighting, sampling steps, NLL quantisation, the Gaussian-Softmax x̂₀ logits), `loss`
(cross-entropy normalisation), `model` (denoiser size), `optim` (clip 0 = none),
`runs` (which models to train and compare), `eval` (samples, encoder, metrics; curves:
`curve_samples` > 0 records the sample metrics of that many samples at `curve_steps` and at
the end), `tag`, `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names, Str

FAMILIES = ("rectangle", "rounded_rectangle", "slot", "bolt_circle", "l_bracket", "arch")
FAMILY_SIZES = {"rectangle": (4, 13), "rounded_rectangle": (8, 15), "slot": (4, 10),
                "bolt_circle": (5, 15), "l_bracket": (6, 12), "arch": (4, 9)}
X0_LOGITS = ("embedding_mean", "two_log_p")
CE_MEANS = ("slots", "slots_and_classes")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"FAMILIES": "lib.sketchdnn.generator:FAMILIES",
           "FAMILY_SIZES": "lib.sketchdnn.generator:FAMILY_SIZES",
           "X0_LOGITS": "lib.sketchdnn.label_process:X0_LOGITS",
           "CE_MEANS": "lib.sketchdnn.loss:CE_MEANS"}

# run name -> (label process, positional encoding)
RUNS = {"gaussian_softmax": ("gaussian_softmax", False),
        "onehot_gaussian": ("onehot_gaussian", False),
        "d3pm": ("d3pm", False),
        "gaussian_softmax_pe": ("gaussian_softmax", True)}

KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(3000, log_every=100, checkpoint_every=500),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "runs": Key(tuple(RUNS), Names(tuple(RUNS))),
    "data.source": Key("generator", Choice(("generator", "sketchgraphs"))),
    "data.sketchgraphs_path": Key("", Str()),
    "data.num_slots": Key(12, Int(lo=1, hi=64)),
    "data.min_primitives": Key(4, Int(lo=1)),
    "data.max_primitives": Key(12, Int(lo=1)),
    "data.families": Key(FAMILIES, Names(FAMILIES)),
    "data.num_train": Key(20_000, Int(lo=1)),
    "data.num_test": Key(1000, Int(lo=2)),
    "diffusion.num_steps": Key(200, Int(lo=2)),
    "diffusion.low_t_max": Key(15, Int(lo=0)),
    "diffusion.low_t_weight": Key(16.0, Float(lo=0.0)),
    "diffusion.sample_steps": Key(100, Int(lo=1)),
    "diffusion.nll_bins": Key(256, Int(lo=2)),
    "diffusion.x0_logits": Key("embedding_mean", Choice(X0_LOGITS)),
    "loss.ce_mean": Key("slots", Choice(CE_MEANS)),
    "model.width": Key(64, Int(lo=1)),
    "model.depth": Key(3, Int(lo=1)),
    "model.heads": Key(4, Int(lo=1)),
    "model.mlp_ratio": Key(4, Int(lo=1)),
    "optim.lr": Key(1e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.warmup": Key(100, Int(lo=0), was="optim.warmup_steps"),
    "optim.schedule": Key("cosine", Choice(("cosine", "constant"))),
    "optim.clip": Key(1.0, Float(lo=0.0), was="optim.grad_clip"),
    "optim.ema_decay": Key(0.999, Float(lo=0.0, hi=1.0, hi_open=True)),
    "optim.batch_size": Key(64, Int(lo=1)),
    "eval.num_samples": Key(1000, Int(lo=2)),
    "eval.sample_batch": Key(500, Int(lo=1)),
    "eval.nll_repeats": Key(4, Int(lo=1)),
    "eval.knn_k": Key(3, Int(lo=1)),
    "eval.raster_res": Key(32, Int(lo=8, hi=256)),
    "eval.encoder_steps": Key(1500, Int(lo=1)),
    "eval.encoder_logs": Key(10, Int(lo=1), before=10),   # log every encoder_steps // this
    "eval.encoder_batch": Key(128, Int(lo=1)),
    "eval.grid_samples": Key(24, Int(lo=1)),
    "eval.endpoint_eps": Key(0.02, Float(lo=0.0, lo_open=True)),
    "eval.plot": Key(True, Bool()),
    "eval.curve_steps": Key((), Ints(lo=1)),
    "eval.curve_samples": Key(0, Int(lo=0)),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/sketchdnn/config_schema.py")


def _check_cross(c: ml_collections.ConfigDict) -> None:
    d = c.data

    def bad(key, value, why):
        raise ConfigError(f"config key '{key}' = {value!r} is not allowed; {why}")

    if not d.min_primitives <= d.max_primitives <= d.num_slots:
        bad("data.max_primitives", d.max_primitives,
            f"need data.min_primitives ({d.min_primitives}) <= data.max_primitives <= "
            f"data.num_slots ({d.num_slots})")
    if d.source == "generator":
        for fam in d.families:
            lo, hi = FAMILY_SIZES[fam]
            if lo > d.max_primitives or hi < d.min_primitives:
                bad("data.families", fam, f"it makes {lo}..{hi} primitives, outside "
                    f"data.min_primitives..max_primitives = {d.min_primitives}..{d.max_primitives}")
    elif not d.sketchgraphs_path:
        bad("data.sketchgraphs_path", d.sketchgraphs_path,
            "data.source = 'sketchgraphs' needs the path of a SketchGraphs sequence file")
    T = c.diffusion.num_steps
    if c.diffusion.low_t_max > T:
        bad("diffusion.low_t_max", c.diffusion.low_t_max, f"it must be <= diffusion.num_steps = {T}")
    if c.diffusion.sample_steps > T:
        bad("diffusion.sample_steps", c.diffusion.sample_steps,
            f"it must be <= diffusion.num_steps = {T}")
    if c.model.width % c.model.heads:
        bad("model.heads", c.model.heads, f"it must divide model.width = {c.model.width}")
    if c.model.width % 2:
        bad("model.width", c.model.width, "it must be even (sinusoidal encodings)")
    if min(c.eval.num_samples, d.num_test) <= c.eval.knn_k:
        bad("eval.knn_k", c.eval.knn_k, "eval.num_samples and data.num_test must exceed it")
    if c.optim.batch_size > d.num_train:
        bad("optim.batch_size", c.optim.batch_size, f"it exceeds data.num_train = {d.num_train}")
    if not c.runs:
        bad("runs", c.runs, "name at least one model")
    if 0 < c.eval.curve_samples <= c.eval.knn_k:
        bad("eval.curve_samples", c.eval.curve_samples,
            f"it must be 0 (no curves) or exceed eval.knn_k = {c.eval.knn_k}")
    cs = tuple(c.eval.curve_steps)
    if cs and not c.eval.curve_samples:
        bad("eval.curve_steps", cs, "set eval.curve_samples > 0 to record curves")
    if any(not 0 < s < c.train.num_steps for s in cs) or list(cs) != sorted(set(cs)):
        bad("eval.curve_steps", cs, f"need increasing steps in 1..train.num_steps - 1 = "
            f"{c.train.num_steps - 1} (the last step is always evaluated)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    if config.data.source == "sketchgraphs":
        return [("lz4", "sketchgraphs", "data.source = 'sketchgraphs'")]
    return []
