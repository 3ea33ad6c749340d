"""Papers whose config keys have one home (`KEYS` in lib/<paper>/config_schema.py): every
variant of every configs/<paper> file validates, and an unknown key is refused by `config`
with the schema file's name and a "did you mean"."""
import glob
import importlib
import os
import re

import pytest

from lib.common.config import REQUIRED, ConfigError, _module_of, load_config

PAPERS = ["gmflow", "spurious_ridge", "lm", "risk_irl", "kar_peak", "cl_similarity",
          "adam_abc", "fleg3d", "dynamic_detr", "editlord", "jetts", "swe_gym", "latent_ate",
          "dsl", "anova_tpnn", "sketchdnn", "maxentdp", "cades", "earth"]


def _variants(paper):
    for path in sorted(glob.glob(f"configs/{paper}/*.py")):
        if os.path.basename(path).startswith("_"):   # __init__, shared helpers
            continue
        module = _module_of(path)
        for variant in getattr(module, "VARIANTS", ()):
            yield f"{path}:{variant}"


@pytest.mark.parametrize("paper", PAPERS)
def test_every_variant_validates_and_unknown_keys_are_named(paper):
    schema = importlib.import_module(f"lib.{paper}.config_schema")
    specs = list(_variants(paper))
    assert specs, f"configs/{paper} declares no VARIANTS"
    for spec in specs:
        schema.validate(load_config(spec))
    known = next(k for k, key in schema.KEYS.items() if key.default != REQUIRED)
    typo = known[:-1] + "_" + known[-1]
    pattern = (rf"lib/{paper}/config_schema\.py: unknown config key '{re.escape(typo)}'; "
               rf"did you mean .*'{re.escape(known)}'")
    with pytest.raises(ConfigError, match=pattern):
        schema.config({typo: schema.KEYS[known].default})
