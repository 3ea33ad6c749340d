"""Dataset layer and `tools/make_pde_data.py`: caching, atomic writes, checked loading, bad input."""
import dataclasses
import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from lib.common.config import load_config
from lib.pde import data_config, dataset, downsampling, systems, trajectory
from tests.timeouts import HANG_TIMEOUT_S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tiny_spec(pde: str = "kdv", **data) -> dataset.DatasetSpec:
    config = load_config(os.path.join(ROOT, f"configs/pde_data/{pde}.py:tiny"))
    return dataclasses.replace(data_config.spec_from_config(config), **data)


def test_write_load_and_cache(tmp_path):
    spec = tiny_spec()
    calls = []
    path, cached = dataset.generate_dataset(spec, str(tmp_path), progress=lambda d, t: calls.append((d, t)))
    assert not cached and calls[-1][0] == calls[-1][1]
    expected = dataset.dataset_metadata(spec)
    data = dataset.load_dataset(path, expected)
    m = expected["coarse_grid"]
    assert data["train"]["data"].shape == (spec.n_train, expected["n_frames"], 1, m)
    assert data["test"]["data"].shape == (spec.n_test, expected["n_frames"], 1, m)
    np.testing.assert_allclose(np.diff(data["train"]["times"]), expected["frame_dt"])
    assert os.path.basename(path) == f"kdv_{dataset.cache_key(expected)}"
    # Same request: found, not recomputed. Different seed: a new dataset.
    assert dataset.generate_dataset(spec, str(tmp_path), progress=lambda d, t: 1 / 0) == (path, True)
    other, cached = dataset.generate_dataset(dataclasses.replace(spec, seed=1), str(tmp_path))
    assert other != path and not cached
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(path), os.path.basename(other)])


def test_frames_match_a_direct_simulation(tmp_path):
    spec = tiny_spec()
    path, _ = dataset.generate_dataset(spec, str(tmp_path))
    metadata = dataset.dataset_metadata(spec)
    solver = systems.build(spec.pde, spec.params)
    u0 = solver.initial_state(dataset.initial_keys(spec.seed, "test", 2)[1])
    n_steps = (metadata["n_frames"] - 1) * metadata["save_every"]
    run = trajectory.simulate(u0, solver.step, n_steps, n_steps)
    coarse = np.asarray(run.final_state)[:, :: spec.space_factor]  # spectral truncation is exact here
    stored = dataset.load_dataset(path, metadata)["test"]["data"][1, -1]
    np.testing.assert_allclose(stored, coarse, atol=1e-4)


def test_loading_with_different_metadata_names_the_field(tmp_path):
    spec = tiny_spec()
    path, _ = dataset.generate_dataset(spec, str(tmp_path))
    expected = dataset.dataset_metadata(dataclasses.replace(spec, params=dict(spec.params, dt=0.005)))
    with pytest.raises(ValueError, match=r"metadata field 'dt' is 0.01, expected 0.005"):
        dataset.load_dataset(path, expected)
    expected = dataset.dataset_metadata(dataclasses.replace(spec, n_test=3))
    with pytest.raises(ValueError, match="'n_test'"):
        dataset.load_dataset(path, expected)
    with pytest.raises(ValueError, match="not a finished dataset"):
        dataset.load_dataset(str(tmp_path / "missing"), expected)


def test_blowup_leaves_no_finished_dataset(tmp_path, monkeypatch):
    spec = tiny_spec()
    build = systems.build
    # A step that multiplies the state by 10 overflows float32 to Inf after ~38 steps.
    monkeypatch.setattr(systems, "build", lambda *a, **k: build(*a, **k)._replace(step=lambda s: 10 * s))
    message = r"field\(s\) 'u' of sample \d+ became NaN/Inf at step 3\d "
    with pytest.raises(trajectory.BlowUpError, match=message):
        dataset.generate_dataset(spec, str(tmp_path))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(pde="heat"), "unknown PDE name 'heat'"),
        (dict(params={"viscosity": -0.01}), "params.viscosity"),
        (dict(data={"space_factor": 3}), "not divisible by the downsampling factor 3"),
        (dict(params={"cfl": 2.0}), "above the CFL limit"),
    ],
)
def test_bad_config_is_a_value_error_before_compute(change, match):
    config = load_config(os.path.join(ROOT, "configs/pde_data/navier_stokes.py:tiny"))
    config.pde = change.get("pde", config.pde)
    for group in ("params", "data"):
        for key, value in change.get(group, {}).items():
            config[group][key] = value
    with pytest.raises(ValueError, match=match):
        data_config.spec_from_config(config)


def test_sharded_generation_equals_single_device():
    spec = tiny_spec("navier_stokes", n_train=3, n_test=2)  # 5 trajectories, padded to 8
    metadata = dataset.dataset_metadata(spec)
    solver = systems.build(spec.pde, spec.params)
    keys = dataset.initial_keys(spec.seed, "train", 5)
    mesh = jax.make_mesh((8,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = dataset.simulate_coarse(solver, keys, metadata, spec.chunk_frames, mesh)
    single = dataset.simulate_coarse(solver, keys, metadata, spec.chunk_frames)
    assert sharded.shape == (5, metadata["n_frames"], 2, 16, 16)
    np.testing.assert_allclose(sharded, single, atol=1e-5)


# runs the tool as `python tools/make_pde_data.py ARGS` would, then says whether JAX loaded
# (a value out of range is answered by data_config's physical checks, which load it)
_BEFORE_JAX = r"""
import json, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
    code = 0
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "jax": "jax" in sys.modules}))
"""


@pytest.mark.parametrize("args, code, says", [
    (["--help"], 0, "Flags of make_pde_data.py:"),
    (["--config=configs/pde_data/burgers.py:tiny", "--config.data.n_trainx=3"], 2,
     "did you mean 'data.n_train'"),
])
def test_command_line_tool_answers_help_and_config_errors_before_jax(args, code, says):
    proc = subprocess.run([sys.executable, "-c", _BEFORE_JAX, "tools/make_pde_data.py", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_TIMEOUT_S,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert json.loads(proc.stdout.splitlines()[-1]) == {"code": code, "jax": False}, proc.stderr
    assert says in proc.stdout + proc.stderr


def test_command_line_tool_writes_a_dataset_and_rejects_a_bad_config(tmp_path):
    command = [sys.executable, os.path.join(ROOT, "tools/make_pde_data.py"),
               "--config=" + os.path.join(ROOT, "configs/pde_data/burgers.py:tiny"),
               f"--workdir={tmp_path}", "--config.data.seed=2"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=HANG_TIMEOUT_S)
    assert first.returncode == 0, first.stderr
    path = first.stdout.strip().splitlines()[-1]
    assert sorted(os.listdir(path)) == ["metadata.json", "test.npz", "train.npz"]
    assert os.path.isfile(os.path.join(tmp_path, "plots", os.path.basename(path) + ".png"))
    with open(os.path.join(path, dataset.METADATA)) as f:   # what a corruption error will suggest
        assert json.load(f)[dataset.COMMAND].startswith(f"python {command[1]} --config=")
    bad = subprocess.run(command + ["--config.params.viscosity=-1.0"], capture_output=True,
                         text=True, env=env, timeout=HANG_TIMEOUT_S)
    assert bad.returncode == 2 and "params.viscosity" in bad.stderr
    # A corrupt cache: the same command names the file, moves the folder aside and rebuilds.
    train = os.path.join(path, "train.npz")
    with open(train, "r+b") as f:
        f.truncate(100)
    healed = subprocess.run(command + ["--noplot"], capture_output=True, text=True, env=env,
                            timeout=HANG_TIMEOUT_S)
    assert healed.returncode == 0, healed.stderr
    assert f"{train}: 100 bytes, metadata.json records" in healed.stderr
    assert "moved the folder aside to " + path + ".corrupt-" in healed.stderr
    assert healed.stdout.strip().splitlines()[-1] == path
    aside = [p for p in os.listdir(tmp_path) if p.startswith(os.path.basename(path) + ".corrupt-")]
    assert len(aside) == 1 and os.path.getsize(os.path.join(tmp_path, aside[0], "train.npz")) == 100
    spec = dataclasses.replace(tiny_spec("burgers"), seed=2)
    assert dataset.load_dataset(path, dataset.dataset_metadata(spec))["train"]["data"].shape[0] == 2


def test_plot_snapshots_downsample_to_the_stored_frames(tmp_path):
    """The tool's fine-grid re-simulation (one compiled program) is the dataset's trajectory."""
    from tools import make_pde_data   # defines its absl flag; parses nothing

    spec = tiny_spec()
    path, _ = dataset.generate_dataset(spec, str(tmp_path))
    metadata = dataset.dataset_metadata(spec)
    solver = systems.build(spec.pde, spec.params)
    fine = make_pde_data.fine_snapshots(solver, dataset.initial_keys(spec.seed, "train", 1)[0],
                                        metadata["warmup_steps"], 2 * metadata["save_every"], 3)
    assert fine.shape == (3, 1, metadata["fine_grid"])
    coarse = dataset.load_dataset(path, metadata)["train"]["data"][0, :6:2]
    down = [downsampling.downsample(f, spec.space_factor, spec.downsample, 1) for f in fine]
    np.testing.assert_allclose(np.stack(down), coarse, atol=1e-5)
