"""lib.common.config key tables: one home for a key's default and rule."""
import pytest

from lib.common import config as c

KEYS = {
    "tag": c.Key(c.REQUIRED, c.Str(allow_empty=False)),
    "model.width": c.Key(16, c.Int(lo=1)),
    "model.new_flag": c.Key(True, c.Bool(), before=False),
    **c.keys_of_block("train", c.train_block(c.REQUIRED), c.TRAIN_SCHEMA),
}


def test_defaults_and_overrides_build_a_config_that_passes_its_own_rules():
    cfg = c.from_keys(KEYS, {"tag": "x", "train.num_steps": 5, "model.width": 8}, where="s.py")
    assert cfg.model.width == 8 and cfg.model.new_flag is True and cfg.train.num_steps == 5
    c.validate(cfg, c.rules_of(KEYS))
    assert c.added_of(KEYS) == {"model.new_flag": False}


def test_a_wrong_value_is_refused_naming_the_key():
    cfg = c.from_keys(KEYS, {"tag": "x", "train.num_steps": 5, "model.width": 0}, where="s.py")
    with pytest.raises(c.ConfigError, match="model.width"):
        c.validate(cfg, c.rules_of(KEYS))


def test_unknown_and_unstated_required_keys_name_the_schema_file():
    with pytest.raises(c.ConfigError, match=r"^s.py: unknown config key 'model.widht'; did you "
                                            r"mean 'model.width'\?$"):
        c.from_keys(KEYS, {"tag": "x", "train.num_steps": 5, "model.widht": 8}, where="s.py")
    with pytest.raises(c.ConfigError, match=r"s.py: the config must state \['tag', "
                                            r"'train.num_steps'\]"):
        c.from_keys(KEYS, {}, where="s.py")
