"""A tiny inpainting run through lib.common.train_loop: PSNR improves, resume is exact,
bad configs fail before compute."""
import os

import jax
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.kar_peak import metrics, tasks, training

CONFIG = "configs/kar_peak/kar_peak.py"


def _problem():
    img = tasks.load_image("camera", 16)
    mask = tasks.make_mask("random", 16, fraction=0.5, seed=0)
    y = img.reshape(256, 1, 1)
    w = (~mask).reshape(256, 1).astype(np.float32)
    return img, mask, training.FitProblem(tasks.grid_coords(16, 16), y, w, (16, 16))


def test_kar_peak_tiny_inpainting_improves_and_resumes(tmp_path):
    config = config_lib.load_config(CONFIG + ":tiny")
    config.optim.lr = 1e-2
    img, mask, problem = _problem()
    f = training.make_fit(problem, "peak+kar", config)
    mesh = mesh_lib.make_mesh(devices=jax.devices()[:1])   # one device: compile once, quickly
    psnr = lambda p: metrics.psnr_missing(np.clip(np.asarray(f.predict(p))[0].reshape(16, 16, 1), 0, 1), img, mask)
    init = f.task.init_state(jax.random.key(0))["params"]
    loop = lambda n: train_loop.LoopConfig(num_steps=n, log_every=10, checkpoint_every=10)
    first = train_loop.train(f.task, loop(20), workdir=str(tmp_path), mesh=mesh)
    resumed = train_loop.train(f.task, loop(30), workdir=str(tmp_path), mesh=mesh)
    assert first.step == 20 and first.resumed_from == 0
    assert resumed.resumed_from == 20 and resumed.step == 30
    assert psnr(first.state["params"]) > psnr(init) + 3.0
    assert psnr(resumed.state["params"]) > psnr(first.state["params"])
    assert float(f.loss_terms(resumed.state["params"])["kar"][0]) > 0
    assert os.path.isdir(tmp_path / "checkpoints")


def test_kar_peak_fit_rejects_unusable_problems():
    config = config_lib.load_config(CONFIG + ":tiny")
    _, _, problem = _problem()
    empty = problem._replace(w=np.zeros_like(problem.w))
    with pytest.raises(ValueError, match="no observed point"):
        training.make_fit(empty, "rff", config)
    with pytest.raises(ValueError, match="unknown method"):
        training.make_fit(problem, "hash+kar", config)
    config.kar.form = "ntk"
    with pytest.raises(ValueError, match="known target kernel"):
        training.make_fit(problem, "peak+kar", config)


@pytest.mark.parametrize("key,value,match", [
    ("kar.form", "ntk", "kar.form"),
    ("data.patch_size", 5, "data.patch_size"),
    ("methods", ("rff", "hash"), "methods"),
    ("data.colour", True, "grey images"),
    ("data.random_fraction", 1.0, "data.random_fraction"),
])
def test_kar_peak_bad_config_is_a_clear_error(key, value, match):
    from lib.kar_peak.config_schema import validate
    config = config_lib.load_config(CONFIG + ":tiny")
    block, _, name = key.rpartition(".")
    (config[block] if block else config)[name] = value
    with pytest.raises(config_lib.ConfigError, match=match):
        validate(config)
