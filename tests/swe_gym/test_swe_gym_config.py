"""The swe_gym config: variants validate; bad values are named before any compute."""
import pytest

from lib.common import config as config_lib
from lib.common.config import ConfigError

PATH = "configs/swe_gym/swe_gym.py"


def _cfg(variant="tiny"):
    return config_lib._module_of(PATH).get_config(variant)


def test_variants_validate_and_quick_is_big_enough():
    mod = config_lib._module_of(PATH)
    for v in mod.VARIANTS:
        mod.validate(mod.get_config(v))
    q = mod.get_config("quick")
    assert q.data.num_repos * q.data.per_repo >= q.data.min_instances >= 200
    assert max(q.scaling.ks) == 16 and tuple(q.rft.caps) == (1, 2, 3, 0)


@pytest.mark.parametrize("key,value,match", [
    ("data.num_test_repos", 3, "data.num_test_repos"),
    ("scaling.ks", (1, 4), "scaling.ks"),
    ("rft.main_cap", 5, "rft.main_cap"),
    ("data.kinds", ("flip_comparison", "typo"), "data.kinds"),
    ("lm.num_heads", 3, "lm.d_model"),
])
def test_bad_values_are_named(key, value, match):
    mod = config_lib._module_of(PATH)
    c = _cfg()
    block, name = key.split(".")
    c[block][name] = value
    with pytest.raises(ConfigError, match=match):
        mod.validate(c)
    c = _cfg()
    c.served.base_url = "http://localhost:8000/v1"
    with pytest.raises(ConfigError, match="served.model"):
        mod.validate(c)
