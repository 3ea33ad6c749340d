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


def test_a_renamed_key_reads_stored_configs_under_its_old_name():
    keys = {**KEYS, "optim.warmup": c.Key(10, c.Int(lo=0), was="optim.warmup_steps"),
            "neural.clip": c.Key(1.0, c.Float(lo=0.0), was="net.grad_clip")}
    assert c.renamed_of(keys) == {"optim.warmup_steps": "optim.warmup",
                                  "net.grad_clip": "neural.clip"}
    stored = {"optim": {"lr": 1.0, "warmup_steps": 5, "b1": 0.9}, "net": {"grad_clip": 2.0}}
    tree, moved = c.rename_keys(stored, c.renamed_of(keys))
    assert tree == {"optim": {"lr": 1.0, "warmup": 5, "b1": 0.9}, "net": {},
                    "neural": {"clip": 2.0}}
    assert list(tree["optim"]) == ["lr", "warmup", "b1"]          # in place
    assert moved == c.renamed_of(keys)
    assert stored["optim"]["warmup_steps"] == 5                    # a copy
    assert c.rename_keys(tree, c.renamed_of(keys)) == (tree, {})   # nothing left to rename
    with pytest.raises(c.ConfigError, match=r"^s.py: config key 'optim.warmup_steps' is now "
                                            r"called 'optim.warmup'$"):
        c.from_keys(keys, {"tag": "x", "train.num_steps": 5, "optim.warmup_steps": 3},
                    where="s.py")


def test_load_config_json_reads_old_names_as_new(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"optim": {"warmup_steps": 5, "grad_clip": 1.0}, "train": {"num_steps": 3}}')
    cfg = c.load_config_json(str(path), {"optim.warmup_steps": "optim.warmup",
                                         "optim.grad_clip": "optim.clip"})
    assert (cfg.optim.warmup, cfg.optim.clip, cfg.train.num_steps) == (5, 1.0, 3)
    assert "warmup_steps" in c.load_config_json(str(path)).optim   # without renames: as stored
