"""What a KAR/PEAK experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/kar_peak file states only what
differs, through `config(overrides)`.

Blocks: `parts` (images / regression), `data` (images, size, colour, masks), `methods`
(INR kinds, optionally '+kar'), `inr` (backbone hyper-parameters), `kar` (regulariser form
and weight, attention net), `optim`, `train` / `mesh` (the shared harness blocks; train.
num_steps is the image fits' step count), `eval` (NTK points, plots) and `regression`
(the 1-D alignment demo, whose KAR is always the 'ntk' form against the closed-form K*).
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Int, Key, Names, Str

INR_KINDS = ("relu", "relu_pe", "rff", "siren", "finer", "peak")
METHOD_NAMES = INR_KINDS + tuple(f"{k}+kar" for k in INR_KINDS)   # a kind, optionally '+kar'
FORMS = ("rowcol", "grid", "ntk")
RESIDUALS = ("squared", "laplacian")
COLOUR_IMAGES = ("astronaut", "coffee", "chelsea", "rocket")
IMAGES = ("camera", "brick", "grass", "gravel", "moon", "coins") + COLOUR_IMAGES
MASKS = ("random", "patch", "textural")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"METHOD_NAMES": "lib.kar_peak.training:method_names", "FORMS": "lib.kar_peak.kar:FORMS",
           "RESIDUALS": "lib.kar_peak.kar:RESIDUALS",
           "COLOUR_IMAGES": "lib.kar_peak.tasks:COLOUR_IMAGES",
           "IMAGES": "lib.kar_peak.tasks:IMAGES", "MASKS": "lib.kar_peak.tasks:MASKS"}
PARTS = ("images", "regression")
POS = dict(lo=0.0, lo_open=True)

KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=15, checkpoint_every=75),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "parts": Key(("images", "regression"), Names(PARTS)),
    "data.images": Key(REQUIRED, Names(IMAGES)),
    "data.size": Key(64, Int(lo=8, hi=1024)),
    "data.colour": Key(False, Bool()),
    "data.texture_crop": Key(0.25, Float(lo=0.0, lo_open=True, hi=1.0)),
    "data.masks": Key(("random", "patch", "textural"), Names(MASKS)),
    "data.random_fraction": Key(0.5, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.patch_fraction": Key(0.25, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.patch_size": Key(8, Int(lo=1)),
    "data.mask_seed": Key(0, Int(lo=0)),
    "methods": Key(REQUIRED, Names(METHOD_NAMES)),
    "inr.width": Key(64, Int(lo=1, hi=4096)),
    "inr.depth": Key(3, Int(lo=1, hi=16)),
    "inr.pe_levels": Key(6, Int(lo=1, hi=16)),
    "inr.rff_features": Key(64, Int(lo=1)),
    "inr.rff_sigma": Key(1.0, Float(**POS)),
    "inr.siren_omega0": Key(30.0, Float(**POS)),
    "inr.finer_omega0": Key(30.0, Float(**POS)),
    "inr.finer_bias_scale": Key(1.0, Float(**POS)),
    "inr.peak_features": Key(64, Int(lo=1)),
    "inr.peak_sigma": Key(1.0, Float(**POS)),
    "inr.peak_order": Key(1, Int(lo=1, hi=4)),
    "inr.peak_learn_frequencies": Key(True, Bool()),
    "inr.seed": Key(0, Int(lo=0)),
    "kar.form": Key("grid", Choice(FORMS)),
    "kar.residual": Key("squared", Choice(RESIDUALS)),
    "kar.weight": Key(0.1, Float(lo=0.0)),
    "kar.rank": Key(100, Int(lo=2, hi=4096)),
    "kar.att_width": Key(64, Int(lo=1)),
    "kar.att_levels": Key(6, Int(lo=1, hi=16)),
    "kar.ntk_chunk": Key(32, Int(lo=1)),
    "optim.lr": Key(0.001, Float(**POS, hi=1.0)),
    "optim.sine.lr": Key(0.0001, Float(**POS, hi=1.0), was="optim.lr_sine"),
    "optim.att.lr": Key(0.001, Float(**POS, hi=1.0), was="optim.att_lr"),
    "eval.ntk_points": Key(256, Int(lo=4, hi=4096)),
    "eval.ntk_chunk": Key(32, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    "regression.methods": Key(("rff", "rff+kar", "peak", "peak+kar"), Names(METHOD_NAMES)),
    "regression.num_steps": Key(400, Int(lo=1)),
    "regression.num_logs": Key(20, Int(lo=1), before=20),          # log every num_steps // this
    "regression.num_checkpoints": Key(4, Int(lo=1), before=4),     # likewise for checkpoints
    "regression.n_train": Key(24, Int(lo=2)),
    "regression.n_test": Key(128, Int(lo=4, hi=4096)),
    "regression.num_draws": Key(4, Int(lo=1, hi=64)),
    "regression.max_freq": Key(24, Int(lo=1, hi=512)),
    "regression.centre": Key(10.0, Float(lo=0.0)),
    "regression.width": Key(2.0, Float(**POS)),
    "regression.noise": Key(0.001, Float(lo=0.0)),
    "regression.seed": Key(0, Int(lo=0)),
    "regression.kar_weight": Key(1.0, Float(lo=0.0)),
    "regression.kar_points": Key(32, Int(lo=4, hi=1024)),
    "regression.rff_sigma": Key(3.0, Float(**POS)),
    "regression.peak_sigma": Key(3.0, Float(**POS)),
}
RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare


config = config_lib.config_builder(KEYS, "lib/kar_peak/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    d = config.data
    if "patch" in d.masks and d.size % d.patch_size:
        raise ConfigError(f"config key 'data.patch_size' = {d.patch_size!r} is not allowed; it must "
                          f"divide data.size = {d.size}")
    if d.colour:
        grey = [n for n in d.images if n not in COLOUR_IMAGES]
        if grey:
            raise ConfigError(f"config key 'data.images' holds grey images {grey} but data.colour "
                              f"is True; colour images are {COLOUR_IMAGES}")
    if config.kar.form == "ntk" and any(m.endswith("+kar") for m in config.methods) \
            and "images" in config.parts:
        raise ConfigError("config key 'kar.form' = 'ntk' is not allowed for images: their optimal "
                          "kernel is unknown; use 'rowcol' or 'grid' (the 'ntk' form is the 1-D "
                          "regression's, set by regression.kar_weight)")
    r = config.regression
    if r.kar_points > r.n_test:
        raise ConfigError(f"config key 'regression.kar_points' = {r.kar_points!r} is not allowed; "
                          f"it must be <= regression.n_test = {r.n_test}")
    if config.eval.ntk_points > d.size * d.size:
        raise ConfigError(f"config key 'eval.ntk_points' = {config.eval.ntk_points!r} is not "
                          f"allowed; an image has only {d.size * d.size} pixels")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    del config
    return [("skimage", "images", "the skimage.data test images and SSIM")]
