"""The experiment binary end to end at the tiny variant: outputs, resume, config errors."""
import json
import os

import jax
import pytest

from experiments.gmflow import train
from lib.common import cli
from lib.common import mesh as mesh_lib
from lib.common.config import apply_overrides, load_config

PATH = "configs/gmflow/gmflow.py"


def _config(**overrides):
    return apply_overrides(load_config(f"{PATH}:tiny"), {
        "train.num_steps": 10, "train.log_every": 5, "train.checkpoint_every": 10, **overrides})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The tiny toy part run twice in one workdir (the second run resumes) and the tiny
    digits part once, on one device: {"toy": (workdir, first, second), "digits": (workdir,
    results)}. (Both parts in one run would make the resume rerun recompile every digits
    sampler; the parts share no compiles, so they run separately.)"""
    toy = _config(**{"parts": ("toy",), "toy.fm_baseline": False, "toy.components": (2,),
                     "toy.gm_solvers": ("gm_ode2",)})
    digits = _config(**{"parts": ("digits",), "digits.classifier_steps": 10,
                        "digits.gm_solver": "gm_sde2"})
    root = tmp_path_factory.mktemp("gmflow")
    # one device: checkpointing states replicated over the 8 fake test devices costs more
    # than the tiny training; sharded training is covered by tests/common
    one = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(train.mesh_lib, "make_mesh", lambda data, model: one)
        toy_dir, digits_dir = str(root / "toy"), str(root / "digits")
        first = train.train_and_evaluate(toy, toy_dir)
        second = train.train_and_evaluate(toy, toy_dir)
        digits_res = train.train_and_evaluate(digits, digits_dir)
    return {"toy": (toy_dir, first, second), "digits": (digits_dir, digits_res)}


def test_tiny_toy_run_writes_results_and_resumes(runs):
    workdir, first, second = runs["toy"]
    for name in ("results.json", "results.md", "config.json", "plots/checkerboard_samples.png",
                 "plots/checkerboard_swd.png", "models/checkerboard_gm2/metrics.jsonl"):
        assert os.path.exists(os.path.join(workdir, name)), name
    with open(os.path.join(workdir, "results.json")) as f:
        saved = json.load(f)        # (written again by the second run, with the same content)
    gm = saved["toy"]["checkerboard"]["models"]["gm2"]
    assert set(gm["solvers"]["gm_ode2"]["nfe"]) == {"1", "2"}
    assert gm["solvers"]["gm_ode2"]["nfe"]["2"]["nonfinite"] == 0
    assert saved["targets"] == {"toy": None}          # no K = 64 / flow-matching pair here
    # rerunning resumes the model from its last checkpoint and re-evaluates identically
    again = second["toy"]["checkerboard"]["models"]["gm2"]
    assert first["toy"]["checkerboard"]["models"]["gm2"]["train"]["resumed_from"] == 0
    assert again["train"]["resumed_from"] == 10
    assert again["solvers"]["gm_ode2"]["nfe"] == first["toy"]["checkerboard"]["models"]["gm2"][
        "solvers"]["gm_ode2"]["nfe"]


def test_tiny_digits_run_sweeps_both_guidances(runs):
    workdir, res = runs["digits"]
    res = res["digits"]
    assert os.path.exists(os.path.join(workdir, "plots/digits_nfe2.png"))
    per = res["nfe"]["2"]
    assert [r["scale"] for r in per["pg"]["sweep"]] == [0.0, 0.5]
    assert [r["scale"] for r in per["cfg"]["sweep"]] == [1.0, 3.0]
    assert per["pg"]["solver"] == "gm_sde2" and per["cfg"]["solver"] == "euler"
    for rows in (per["pg"]["sweep"], per["cfg"]["sweep"], per["cfg_gm"]["sweep"]):
        for r in rows:
            assert 0.0 <= r["precision"] <= 1.0 and r["fd"] >= 0.0
    with open(os.path.join(workdir, "results.json")) as f:
        assert "met" in json.load(f)["targets"]["digits"]["2"]


def test_bad_config_exits_with_a_clear_error(tmp_path, capsys):
    argv = ["main.py", f"--config={PATH}:tiny", f"--workdir={tmp_path}",
            "--config.digits.pg_scales=(0.5,1.2)"]
    with pytest.raises(SystemExit) as err:
        cli.run(train.train_and_evaluate, argv)
    assert err.value.code == 2
    assert "digits.pg_scales" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(tmp_path, "results.json"))


def test_image_sizes_the_unet_cannot_take_fail_before_training(tmp_path):
    """8×8 digits: 5 UNet levels need sides divisible by 16; 3×3 downsampling does not divide 8."""
    from lib.common.config import ConfigError
    for i, (overrides, needle) in enumerate((
            ({"digits.network": "unet", "digits.unet_features": (4,) * 5}, r"digits\.unet_features"),
            ({"digits.downsample": 3}, r"digits\.downsample"))):
        config = _config(**{"parts": ("digits",), **overrides})
        with pytest.raises(ConfigError, match=needle):
            train.train_and_evaluate(config, str(tmp_path / f"run{i}"))
        assert not os.path.exists(tmp_path / f"run{i}" / "models")
