"""Configs validate; bad values are ConfigErrors naming the key; the binary end to end."""
import json
import os

import jax
import pytest

from experiments.sketchdnn import train
from lib.common import cli
from lib.common import mesh as mesh_lib
from lib.common.config import ConfigError, apply_overrides, load_config
from lib.sketchdnn.config_schema import validate

PATH = "configs/sketchdnn/sketchdnn.py"


@pytest.mark.parametrize("variant", ["tiny", "quick", "paper"])
def test_variants_validate(variant):
    validate(load_config(f"{PATH}:{variant}"))


@pytest.mark.parametrize("overrides,needle", [
    ({"data.max_primitives": 9}, r"data\.max_primitives.*data\.num_slots \(6\)"),
    ({"data.min_primitives": 7, "data.max_primitives": 6}, r"data\.max_primitives"),
    ({"data.families": ("rounded_rectangle",)}, r"data\.families.*8\.\.15"),
    ({"data.families": ("gear",)}, r"data\.families"),
    ({"model.heads": 3}, r"model\.heads"),
    ({"diffusion.sample_steps": 41}, r"diffusion\.sample_steps"),
    ({"diffusion.low_t_max": 41}, r"diffusion\.low_t_max"),
    ({"runs": ("gaussian_softmax", "vae")}, r"runs"),
    ({"data.source": "sketchgraphs"}, r"data\.sketchgraphs_path"),
    ({"eval.knn_k": 16}, r"eval\.knn_k"),
    ({"optim.schedule": "linear"}, r"optim\.schedule"),
])
def test_bad_values_name_the_key(overrides, needle):
    config = apply_overrides(load_config(f"{PATH}:tiny"), overrides)
    with pytest.raises(ConfigError, match=needle):
        validate(config)


def test_tiny_run_writes_results_and_resumes(tmp_path, monkeypatch):
    # one device: checkpointing a state replicated over the 8 fake test devices costs more
    # than the rest of the run; sharded training is covered by tests/common
    one = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    monkeypatch.setattr(train.mesh_lib, "make_mesh", lambda data, model: one)
    config = apply_overrides(load_config(f"{PATH}:tiny"), {"runs": ("gaussian_softmax",),
                                                            "eval.plot": True})
    workdir = str(tmp_path / "run")
    first = train.train_and_evaluate(config, workdir)
    for name in ("results.json", "results.md", "config.json", "plots/samples_data.png",
                 "plots/samples_gaussian_softmax.png", "plots/train_loss.png",
                 "models/gaussian_softmax/metrics.jsonl", "models/encoder/metrics.jsonl"):
        assert os.path.exists(os.path.join(workdir, name)), name
    with open(os.path.join(workdir, "results.json")) as f:
        saved = json.load(f)
    run = saved["runs"]["gaussian_softmax"]
    assert run["train"]["steps"] == 4 and run["fd"] >= 0 and 0 <= run["precision"] <= 1
    nll = run["nll"]
    assert nll["total"] == pytest.approx(nll["prior"] + nll["diffusion"] + nll["reconstruction"])
    assert nll["total"] > 0 and nll["reconstruction_params"] > 0
    assert saved["targets"] == {"fd_beats_baselines": None, "nll_beats_baselines": None,
                                "pe_does_worse": None}
    with open(os.path.join(workdir, "results.md")) as f:
        assert "Gaussian-Softmax (SketchDNN)" in f.read()
    # rerunning resumes every model from its checkpoint and re-evaluates identically
    second = train.train_and_evaluate(config, workdir)
    again = second["runs"]["gaussian_softmax"]
    assert again["train"]["resumed_from"] == 4
    assert again["fd"] == first["runs"]["gaussian_softmax"]["fd"]
    assert again["nll"] == first["runs"]["gaussian_softmax"]["nll"]


def test_bad_config_exits_with_a_clear_error(tmp_path, capsys):
    argv = ["main.py", f"--config={PATH}:tiny", f"--workdir={tmp_path}",
            "--config.data.max_primitives=40"]
    with pytest.raises(SystemExit) as err:
        cli.run(train.train_and_evaluate, argv)
    assert err.value.code == 2
    assert "data.max_primitives" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(tmp_path, "results.json"))
