"""What a KAR/PEAK experiment config may hold, and the checks run before any compute.

Blocks: `parts` (images / regression), `data` (images, size, colour, masks), `methods`
(INR kinds, optionally '+kar'), `inr` (backbone hyper-parameters), `kar` (regulariser form
and weight, attention net), `optim`, `train` / `mesh` (the shared harness blocks; train.
num_steps is the image fits' step count), `eval` (NTK points, plots) and `regression`
(the 1-D alignment demo, whose KAR is always the 'ntk' form against the closed-form K*).
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Names, Rule, Str
from lib.kar_peak.fit import method_names
from lib.kar_peak.kar import FORMS, RESIDUALS
from lib.kar_peak.tasks import COLOUR_IMAGES, IMAGES, MASKS

PARTS = ("images", "regression")
POS = dict(lo=0.0, lo_open=True)

SCHEMA: dict[str, Rule] = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "parts": Names(PARTS),
    "data.images": Names(IMAGES),
    "data.size": Int(lo=8, hi=1024),
    "data.colour": Bool(),
    "data.texture_crop": Float(lo=0.0, lo_open=True, hi=1.0),
    "data.masks": Names(MASKS),
    "data.random_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.patch_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.patch_size": Int(lo=1),
    "data.mask_seed": Int(lo=0),
    "methods": Names(method_names()),
    "inr.width": Int(lo=1, hi=4096),
    "inr.depth": Int(lo=1, hi=16),
    "inr.pe_levels": Int(lo=1, hi=16),
    "inr.rff_features": Int(lo=1),
    "inr.rff_sigma": Float(**POS),
    "inr.siren_omega0": Float(**POS),
    "inr.finer_omega0": Float(**POS),
    "inr.finer_bias_scale": Float(**POS),
    "inr.peak_features": Int(lo=1),
    "inr.peak_sigma": Float(**POS),
    "inr.peak_order": Int(lo=1, hi=4),
    "inr.peak_learn_frequencies": Bool(),
    "inr.seed": Int(lo=0),
    "kar.form": Choice(FORMS),
    "kar.residual": Choice(RESIDUALS),
    "kar.weight": Float(lo=0.0),
    "kar.rank": Int(lo=2, hi=4096),
    "kar.att_width": Int(lo=1),
    "kar.att_levels": Int(lo=1, hi=16),
    "kar.ntk_chunk": Int(lo=1),
    "optim.lr": Float(**POS, hi=1.0),
    "optim.lr_sine": Float(**POS, hi=1.0),
    "optim.att_lr": Float(**POS, hi=1.0),
    "eval.ntk_points": Int(lo=4, hi=4096),
    "eval.ntk_chunk": Int(lo=1),
    "eval.plots": Bool(),
    "regression.methods": Names(method_names()),
    "regression.num_steps": Int(lo=1),
    "regression.n_train": Int(lo=2),
    "regression.n_test": Int(lo=4, hi=4096),
    "regression.num_draws": Int(lo=1, hi=64),
    "regression.max_freq": Int(lo=1, hi=512),
    "regression.centre": Float(lo=0.0),
    "regression.width": Float(**POS),
    "regression.noise": Float(lo=0.0),
    "regression.seed": Int(lo=0),
    "regression.kar_weight": Float(lo=0.0),
    "regression.kar_points": Int(lo=4, hi=1024),
    "regression.rff_sigma": Float(**POS),
    "regression.peak_sigma": Float(**POS),
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    del config
    return [("skimage", "images", "the skimage.data test images and SSIM")]
