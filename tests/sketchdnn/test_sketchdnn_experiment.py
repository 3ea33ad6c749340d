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


@pytest.mark.parametrize("variant", ["tiny", "quick", "official", "paper"])
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
    ({"loss.ce_mean": "classes"}, r"loss\.ce_mean"),
    ({"diffusion.x0_logits": "log_p"}, r"diffusion\.x0_logits"),
    ({"eval.curve_steps": (2,)}, r"eval\.curve_steps.*eval\.curve_samples > 0"),
    ({"eval.curve_steps": (3, 2), "eval.curve_samples": 8}, r"eval\.curve_steps.*increasing"),
    ({"eval.curve_steps": (4,), "eval.curve_samples": 8}, r"eval\.curve_steps.*1\.\.train"),
    ({"eval.curve_samples": 3}, r"eval\.curve_samples.*eval\.knn_k"),
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
    # the bound under both reverse parameterisations; the model's is the tighter
    by = nll["by_x0_logits"]
    assert set(by) == {"two_log_p", "embedding_mean"} and by["two_log_p"] != by["embedding_mean"]
    assert nll["x0_logits"] == min(by, key=lambda k: by[k]["total"])
    assert nll["total"] == min(v["total"] for v in by.values())
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


def test_official_variant_is_the_official_training_and_sampler():
    c = load_config(f"{PATH}:official")
    assert (c.loss.ce_mean, c.diffusion.x0_logits) == ("slots_and_classes", "two_log_p")
    assert (c.optim.lr, c.optim.schedule, c.optim.clip, c.optim.ema_decay) == (
        1e-4, "constant", 0.0, 0.0)
    quick = load_config(f"{PATH}:quick")
    assert (quick.loss.ce_mean, quick.diffusion.x0_logits) == ("slots", "embedding_mean")
    assert (c.model, c.data, c.diffusion.num_steps) == (quick.model, quick.data,
                                                         quick.diffusion.num_steps)


def test_curves_are_recorded_at_the_curve_steps_and_survive_a_rerun(tmp_path, monkeypatch):
    one = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    monkeypatch.setattr(train.mesh_lib, "make_mesh", lambda data, model: one)
    config = apply_overrides(load_config(f"{PATH}:tiny"), {
        "runs": ("gaussian_softmax",), "eval.curve_steps": (2,), "eval.curve_samples": 8,
        "diffusion.x0_logits": "two_log_p", "loss.ce_mean": "slots_and_classes",
        "optim.clip": 0.0, "optim.ema_decay": 0.0})
    workdir = str(tmp_path / "run")
    first = train.train_and_evaluate(config, workdir)["runs"]["gaussian_softmax"]
    assert [row["step"] for row in first["curve"]] == [2, 4]
    assert first["train"] == {**first["train"], "steps": 4, "resumed_from": 0}
    assert all(0 <= row["dangling_fraction"] <= 1 and row["fd"] >= 0 for row in first["curve"])
    again = train.train_and_evaluate(config, workdir)["runs"]["gaussian_softmax"]
    assert again["curve"] == first["curve"] and again["train"]["resumed_from"] == 4


def test_bad_config_exits_with_a_clear_error(tmp_path, capsys):
    argv = ["main.py", f"--config={PATH}:tiny", f"--workdir={tmp_path}",
            "--config.data.max_primitives=40"]
    with pytest.raises(SystemExit) as err:
        cli.run(train.train_and_evaluate, argv)
    assert err.value.code == 2
    assert "data.max_primitives" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(tmp_path, "results.json"))
