"""`runs.setup`: a MultiPDENet run checks its config once and reads its dataset once."""
import collections

import numpy as np
import pytest

from experiments.multipdenet import train
from lib.common import config as config_lib
from lib.multipdenet import data as data_lib, runs
from lib.pde import data_config, dataset as dataset_lib

CONFIG = "configs/multipdenet/burgers.py:tiny"


@pytest.fixture()
def counts(monkeypatch):
    """Checks of a MultiPDENet config (a schema with 'dataset.pde'), of its dataset config on
    its own (`spec_and_metadata`, which `spec_from_config` calls) and calls of
    `dataset_metadata`."""
    seen = collections.Counter()
    validate, metadata, spec_and_metadata = (config_lib.validate, dataset_lib.dataset_metadata,
                                             data_config.spec_and_metadata)

    def counted_validate(config, schema, *args, **kwargs):
        seen["config_checks"] += "dataset.pde" in schema
        return validate(config, schema, *args, **kwargs)

    def counted_spec(config):
        seen["dataset_checks"] += 1
        return spec_and_metadata(config)

    def counted_metadata(spec):
        seen["dataset_metadata"] += 1
        return metadata(spec)

    monkeypatch.setattr(config_lib, "validate", counted_validate)
    monkeypatch.setattr(data_config, "spec_and_metadata", counted_spec)
    monkeypatch.setattr(dataset_lib, "dataset_metadata", counted_metadata)
    return seen


def _config(tmp_path, **overrides):
    return config_lib.apply_overrides(config_lib.load_config(CONFIG), {
        "data_root": str(tmp_path / "data"), **overrides})


def test_a_run_checks_its_config_once_and_computes_its_metadata_once_beside_the_check(
        tmp_path, counts):
    # the classical solver: the whole run (dataset made, evaluated, results written), no training
    config = _config(tmp_path, **{"model.name": "coarse_solver", "eval.plots": False})
    train.train_and_evaluate(config, str(tmp_path / "made"))
    made = dict(counts)
    counts.clear()
    train.train_and_evaluate(config, str(tmp_path / "cached"))
    # the config's check (config_schema.validate) checks its dataset once on its own, which
    # computes the metadata; setup computes it once more, generate_dataset once more
    assert made == dict(counts) == {"config_checks": 1, "dataset_checks": 1, "dataset_metadata": 3}


def test_setup_without_data_has_the_loaded_runs_metadata_and_emulator(tmp_path, counts):
    config = _config(tmp_path, **{"model.frame_stride": 2, "train.window": 2})
    bare = runs.setup(config, load_data=False)
    assert bare.data is None and bare.mesh is None and not (tmp_path / "data").exists()
    assert counts == {"config_checks": 1, "dataset_checks": 1, "dataset_metadata": 2}  # check + setup
    full = runs.setup(config)
    assert full.metadata == bare.metadata == full.data["metadata"]
    assert full.metadata["frame_stride"] == 2 and full.data["test"].shape[1] == full.metadata["n_frames"]
    assert full.spec == bare.spec == data_lib.spec_from_config(config.dataset)
    np.testing.assert_array_equal(full.data["test"], data_lib.load_or_generate(
        config.dataset, config.data_root, frame_stride=2)["test"])


def test_setup_names_a_bad_key_before_reading_data_or_writing_the_workdir(tmp_path):
    config = _config(tmp_path, **{"train.window": 50})
    with pytest.raises(config_lib.ConfigError, match="'train.window' = 50"):
        runs.setup(config, str(tmp_path / "w"))
    assert not (tmp_path / "w").exists() and not (tmp_path / "data").exists()
