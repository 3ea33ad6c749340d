"""Configs: every variant validates; bad values are ConfigErrors naming the key."""
import pytest

from lib.common.config import ConfigError, apply_overrides, load_config
from lib.gmflow.config_schema import validate

PATH = "configs/gmflow/gmflow.py"


@pytest.mark.parametrize("variant", ["tiny", "quick", "official", "paper", "seeds", "fashion"])
def test_variants_validate(variant):
    validate(load_config(f"{PATH}:{variant}"))


@pytest.mark.parametrize("key,value,needle", [
    ("toy.components", (0, 8), "toy.components"),                 # K < 1
    ("digits.components", 0, "digits.components"),
    ("toy.nfes", (0, 4), "toy.nfes"),                             # NFE < 1
    ("digits.nfes", (4, -1), "digits.nfes"),
    ("digits.pg_scales", (0.2, 1.0), "digits.pg_scales"),         # w̃ must be < 1
    ("digits.pg_scales", (-0.1,), "digits.pg_scales"),
    ("digits.cfg_scales", (-1.0, 2.0), "digits.cfg_scales"),
    ("toy.trans_ratio", 0.0, "toy.trans_ratio"),                  # λ in (0, 1]
    ("toy.gm_solvers", ("gm_sde", "euler"), "toy.gm_solvers"),
    ("toy.mmd_samples", 10 ** 7, "toy.mmd_samples"),
    ("digits.p_uncond", 0.0, "digits.p_uncond"),
    ("digits.network", "transformer", "digits.network"),
    ("digits.seeds", (0, 0), "digits.seeds"),                     # distinct offsets
    ("digits.seeds", (), "digits.seeds"),
    ("digits.real_samples", 2, "digits.real_samples"),            # must exceed knn_k
    ("digits.methods", ("pg", "dpm"), "digits.methods"),
    ("digits.downsample", 0, "digits.downsample"),
])
def test_bad_values_name_the_key(key, value, needle):
    config = apply_overrides(load_config(f"{PATH}:tiny"), {key: value})
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        validate(config)


def test_heun_is_not_a_digits_baseline():
    config = apply_overrides(load_config(f"{PATH}:tiny"), {"digits.fm_solver": "heun"})
    with pytest.raises(ConfigError, match=r"digits\.fm_solver"):
        validate(config)
