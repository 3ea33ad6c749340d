"""lib/pde/data_config.py: its own rules (no harness import) refuse a dataset request with the
harness's wording, and the harness takes them into an experiment's schema as ConfigErrors."""
import os

import ml_collections
import pytest

from lib.common import config as config_lib
from lib.pde import data_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VALUES = (-1, 0, 0.5, 1, 8, 9, 2.5, True, "3", None, float("nan"))


def _message(rule, value):
    try:
        rule.check("k", value)
    except ValueError as err:
        return str(err)
    return None


@pytest.mark.parametrize("ours, harness", [
    (data_config.Number(integer=True, lo=8), config_lib.Int(lo=8)),
    (data_config.Number(integer=True, lo=0), config_lib.Int(lo=0)),
    (data_config.Number(lo=0, lo_open=True), config_lib.Float(lo=0, lo_open=True)),
    (data_config.Number(lo=0), config_lib.Float(lo=0)),
    (data_config.Number(), config_lib.Float()),
    (data_config.OneOf((0.5, "3")), config_lib.Choice((0.5, "3"))),
])
def test_rules_accept_and_word_refusals_as_the_harness_does(ours, harness):
    assert [_message(ours, v) for v in VALUES] == [_message(harness, v) for v in VALUES]
    assert any(_message(ours, v) is None for v in VALUES)
    assert any(_message(ours, v) is not None for v in VALUES)


def _burgers():
    return config_lib.load_config(os.path.join(ROOT, "configs/pde_data/burgers.py:tiny"))


def test_a_bad_request_is_one_spec_error_naming_the_key():
    config = _burgers()
    config.params.viscosity = -1.0
    with pytest.raises(data_config.SpecError,
                       match=r"^config key 'params.viscosity' = -1.0 is not allowed; expected a float >= 0$"):
        data_config.spec_from_config(config)
    config = _burgers()
    with config.unlocked():
        config.data.n_tarin = 3
    with pytest.raises(data_config.SpecError,
                       match=r"^unknown config key 'data.n_tarin' \(= 3\); did you mean 'data.n_train'"):
        data_config.spec_from_config(config)
    config = _burgers()
    del config.params["n_modes"]
    with pytest.raises(data_config.SpecError, match=r"missing required key\(s\) \['params.n_modes'\]"):
        data_config.spec_from_config(config)


def test_an_experiment_schema_with_the_dataset_rules_raises_config_errors():
    """Under a prefix in a harness schema, a refused dataset value is a ConfigError (one line
    from `cli.run`) with the rule's own message."""
    config = _burgers()
    schema = {f"dataset.{k}": rule for k, rule in data_config.schema("burgers").items()}
    wrapped = ml_collections.ConfigDict({"dataset": config.to_dict()})
    config_lib.validate(wrapped, schema)
    wrapped.dataset.data.n_test = 0
    with pytest.raises(config_lib.ConfigError,
                       match=r"^config key 'dataset.data.n_test' = 0 is not allowed; expected an int >= 1$"):
        config_lib.validate(wrapped, schema)
