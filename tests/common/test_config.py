"""Config loading, validation and override errors name the key, the value and what is allowed."""
import glob
import os

import ml_collections
import pytest

from lib.common import config as config_lib
from lib.common.config import ConfigError, Choice, Float, Int, Ints, Str
from tests.common import harness_utils as hu
from tests.common import regression_app as app

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_FILES = sorted(
    f for f in glob.glob(os.path.join(ROOT, "configs", "**", "*.py"), recursive=True)
    if not os.path.basename(f).startswith("_")
) + [hu.APP]


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_config_file_loads_at_every_variant_and_passes_its_check(path):
    module_cfg = config_lib.load_config(path)  # default variant
    assert isinstance(module_cfg, ml_collections.ConfigDict)
    spec = config_lib._module_of(path)
    assert spec.VARIANTS, f"{path} declares no VARIANTS"
    for variant in spec.VARIANTS:
        cfg = config_lib.load_config(f"{path}:{variant}")
        spec.validate(cfg)


def test_unknown_variant_names_the_allowed_ones():
    with pytest.raises(ConfigError, match=r"unknown config variant 'huge'; allowed: \['long', 'tiny'\]"):
        config_lib.load_config(f"{hu.APP}:huge")


def test_missing_file():
    with pytest.raises(ConfigError, match="does not exist"):
        config_lib.load_config("configs/nope/nope.py:tiny")


@pytest.mark.parametrize("key,value,message", [
    ("optim.lr", -1.0, r"'optim.lr' = -1.0 is not allowed; expected a float > 0.0 and <= 10.0"),
    ("optim.lr", "fast", r"'optim.lr' = 'fast' is not allowed; expected a float"),
    ("data.dim", 2.5, r"'data.dim' = 2.5 is not allowed; expected an int >= 1 and <= 4096"),
    ("data.dim", True, r"'data.dim' = True is not allowed; expected an int"),
    ("train.num_steps", 0, r"'train.num_steps' = 0 is not allowed; expected an int >= 1"),
])
def test_bad_values_are_named(key, value, message):
    cfg = app.get_config("tiny")
    node = cfg
    *parents, leaf = key.split(".")
    for p in parents:
        node = node[p]
    with cfg.ignore_type():
        node[leaf] = value
    with pytest.raises(ConfigError, match=message):
        app.validate(cfg)


def test_unknown_key_in_config_is_named_with_a_suggestion():
    cfg = app.get_config("tiny")
    cfg.optim.lrr = 0.1
    with pytest.raises(ConfigError, match=r"unknown config key 'optim.lrr' .*did you mean 'optim.lr'"):
        app.validate(cfg)


def test_missing_key_is_named():
    cfg = app.get_config("tiny")
    del cfg.model["hidden"]
    with pytest.raises(ConfigError, match=r"missing required key\(s\) \['model.hidden'\]"):
        app.validate(cfg)


def test_override_errors():
    cfg = app.get_config("tiny")
    with pytest.raises(ConfigError, match=r"unknown config key 'optim.lrr' in override "
                                          r"--config\.optim\.lrr; did you mean 'optim.lr'"):
        config_lib.apply_overrides(cfg, {"optim.lrr": 0.1})
    # a tool whose overrides come in another flag names that one
    with pytest.raises(ConfigError, match=r"in override --override=optim\.lrr; did you mean 'optim.lr'"):
        config_lib.apply_overrides(cfg, {"optim.lrr": 0.1}, flag="--override=")
    with pytest.raises(ConfigError, match=r"'data.dim' = 'x' has type str; expected int"):
        config_lib.apply_overrides(cfg, {"data.dim": "x"})
    out = config_lib.apply_overrides(cfg, {"optim.lr": 1, "data.dim": 3})
    assert out.optim.lr == 1.0 and isinstance(out.optim.lr, float) and out.data.dim == 3
    assert cfg.data.dim == 8  # the original is untouched


def test_rules():
    Choice(options=("a", "b")).check("k", "a")
    with pytest.raises(ConfigError, match=r"'k' = 'c' .*one of \['a', 'b'\]"):
        Choice(options=("a", "b")).check("k", "c")
    with pytest.raises(ConfigError, match="of length 2"):
        Ints(lo=1, length=2).check("k", (1, 2, 3))
    with pytest.raises(ConfigError, match="non-empty string"):
        Str(allow_empty=False).check("k", "")
    with pytest.raises(ConfigError, match="< 1"):
        Float(hi=1.0, hi_open=True).check("k", 1.0)
    Int(lo=-1).check("k", -1)


def test_cli_misspelled_override_stops_before_compute(tmp_path):
    proc = hu.run_app(str(tmp_path / "w"), "tiny", "--config.optim.lrr=0.1")
    assert proc.returncode == 2
    assert "unknown config key 'optim.lrr'" in proc.stderr and "did you mean 'optim.lr'" in proc.stderr
    assert not os.path.exists(tmp_path / "w")  # nothing was created


def test_cli_out_of_range_override_stops_before_compute(tmp_path):
    proc = hu.run_app(str(tmp_path / "w"), "tiny", "--config.optim.lr=-3")
    assert proc.returncode == 2
    assert "'optim.lr' = -3.0 is not allowed" in proc.stderr
    assert not os.path.exists(tmp_path / "w")


def test_workdir_of_another_run_is_refused(tmp_path):
    from lib.common import workdir as wd
    wd.prepare(str(tmp_path), {"model": {"hidden": 32}, "train": {"num_steps": 5}})
    wd.prepare(str(tmp_path), {"model": {"hidden": 32}, "train": {"num_steps": 9}},
               steps_extendable=True)                 # extend (a declared constant-lr run): ok
    with pytest.raises(ValueError, match=r"different config \('model.hidden': 32 in the workdir, 64 now\)"):
        wd.prepare(str(tmp_path), {"model": {"hidden": 64}, "train": {"num_steps": 9}})


def test_names_and_floats_rules_name_what_is_allowed():
    from lib.common.config import Floats, Names
    names = Names(("a", "b"))
    names.check("parts", ("a",))
    for bad in ((), ("a", "a"), ("c",), "a"):
        with pytest.raises(ConfigError, match="distinct names from \\['a', 'b'\\]"):
            names.check("parts", bad)
    Names(("a",), allow_empty=True).check("parts", ())
    rule = Floats(0.0, 1.0, hi_open=True, increasing=True)
    rule.check("etas", (0.0, 0.5, 0.9))
    for bad in ((), (0.5, 0.5), (0.0, 1.0), (-0.1,), (float("nan"),), (True,)):
        with pytest.raises(ConfigError, match="strictly increasing .* >= 0.0 and < 1.0"):
            rule.check("etas", bad)
    Floats(lo=0.0, lo_open=True).check("steps", (1e-3, 1e3))
    with pytest.raises(ConfigError, match="> 0.0"):
        Floats(lo=0.0, lo_open=True).check("steps", (0.0,))
