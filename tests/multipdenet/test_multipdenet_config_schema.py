"""lib/multipdenet/config_schema.py: one entry per key (default + rule) builds and checks
every config."""
import pytest

from configs.multipdenet import _base
from configs.pde_data import burgers as data
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.multipdenet import config_schema as schema

REQUIRED = {"tag": "t", "optim.lr": 1e-3, "train.num_steps": 4, "train.window": 2,
            "train.batch_size": 2}
SMALL = {"model.fno_modes": 4, "baseline.fno_modes": 4}  # the 16² tiny grid fits 4 modes


def test_defaults_pass_their_own_rules():
    for key, entry in schema.KEYS.items():
        value = REQUIRED.get(key, entry.default)
        entry.rule.check(key, value)  # raises ConfigError if a default breaks its rule
    config = schema.config(data.get_config("tiny"), REQUIRED | SMALL)
    schema.validate(config)
    flat = config_lib.flatten(config)
    assert {k for k in flat if not k.startswith("dataset.")} == set(schema.KEYS)
    assert flat["model.corrector_every"] == "stage" and flat["optim.lr"] == 1e-3


@pytest.mark.parametrize("key,value,message", [
    ("model.n_micro", 0, r"^config key 'model.n_micro' = 0 is not allowed; expected an int >= 1 and <= 64$"),
    ("model.corrector_every", "once", r"^config key 'model.corrector_every' = 'once' is not allowed"),
    ("optim.lr", 2.0, r"^config key 'optim.lr' = 2.0 is not allowed"),
    ("train.pushforward", 50, r"^config key 'train.pushforward' = 50 is not allowed; with train.window"),
    ("train.noise_std", -0.1, r"^config key 'train.noise_std' = -0.1 is not allowed"),
])
def test_a_wrong_value_is_refused_naming_the_key(key, value, message):
    config = schema.config(data.get_config("tiny"), REQUIRED | SMALL | {key: value})
    with pytest.raises(ConfigError, match=message) as err:
        schema.validate(config)
    assert "\n" not in str(err.value)


def test_unknown_or_unstated_keys_are_refused():
    with pytest.raises(ConfigError, match=r"config_schema.py: unknown config key 'model.n_mikro'"):
        schema.config(data.get_config("tiny"), REQUIRED | {"model.n_mikro": 4})
    with pytest.raises(ConfigError, match=r"must state \['optim.lr'\]"):
        schema.config(data.get_config("tiny"), {k: v for k, v in REQUIRED.items() if k != "optim.lr"})


def test_added_keys_come_from_the_schema():
    assert schema.ADDED_KEYS == {"model.corrector_every": "stage", "model.frame_stride": 1,
                                 "train.window_curriculum": (), "train.pushforward": 0,
                                 "train.noise_std": 0.0, "train.corr_weight": 0.0,
                                 "train.remat": False, "model.stencil_init": None,
                                 "train.freeze_stencils": False}


def test_the_tiny_variant_states_only_what_differs():
    config = _base.tiny(data.get_config("tiny"), "x")
    flat = config_lib.flatten(config)
    differs = {k for k, e in schema.KEYS.items() if flat[k] != e.default}
    assert differs == set(_base.TINY) | {"tag"}
