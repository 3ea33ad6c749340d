"""The MultiPDENet experiment end to end on the tiny config (8 fake CPU devices)."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from experiments.multipdenet import train
from lib.common import config as config_lib
from lib.multipdenet import data as data_lib, emulators, evaluation, metrics as mpn_metrics
from lib.multipdenet.config_schema import validate
from lib.multipdenet.runs import evaluate_transfer, setup
from lib.multipdenet.training import build_emulator, make_task, window_loss
from tests import experiment_runs

CONFIG = "configs/multipdenet/burgers.py:tiny"


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("pde_data"))


def _config(data_root, **overrides):
    return config_lib.apply_overrides(config_lib.load_config(CONFIG),
                                      {"data_root": data_root, **overrides})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, data_root):
    # compiled as the rerun test's second run is: that test compares rmse bit for bit
    return experiment_runs.tiny_run(tmp_path_factory, train, _config(data_root))


def test_tiny_run_writes_results_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    for key in ("rmse", "mae", "mnad", "hct"):
        assert len(on_disk[key]) == 2 and np.isfinite(on_disk[key][0])
    assert len(on_disk["correlation_mean"]) == on_disk["eval_steps"] == 10
    assert 0 < on_disk["hct"][0] <= on_disk["horizon"] + 1e-9
    assert on_disk["n_params"] == results["n_params"] > 0
    for name in ("snapshots.png", "correlation.png", "train_loss.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 1000
    assert os.path.isdir(os.path.join(workdir, "checkpoints", "4"))
    # the validation error at step 0 and every train.checkpoint_every (2) steps
    rows = [r for r in map(json.loads, open(os.path.join(workdir, "metrics.jsonl")))
            if "val_rollout_mse" in r]
    assert [r["step"] for r in rows] == [0, 2, 4] and all(r["val_rollout_mse"] > 0 for r in rows)


def test_classical_baseline_is_a_direct_rollout_of_the_coarse_solver(tiny_run, data_root):
    _, results = tiny_run
    data = data_lib.load_or_generate(_config(data_root).dataset, data_root)
    test, n = data["test"], results["eval_steps"]
    solver = emulators.coarse_solver(data["metadata"])
    pred = jnp.swapaxes(solver.rollout({}, jnp.asarray(test[:, 0]), n), 0, 1)
    direct = mpn_metrics.evaluate_rollouts(pred, jnp.asarray(test[:, 1:n + 1]),
                                           data["metadata"]["frame_dt"])
    base = results["baselines"]["coarse_solver"]
    for key in ("rmse", "hct"):
        np.testing.assert_allclose(base[key], [float(v) for v in direct[key]], rtol=1e-5)
    np.testing.assert_allclose(base["correlation_mean"], direct["correlation"][0], rtol=1e-5)
    assert base["eval_steps"] == n and base["n_diverged"] == 0
    assert base["rmse"] != results["rmse"]                   # not the model's own rollout


def test_rerun_resumes_and_reproduces_and_prints_the_headline_last(tiny_run, data_root, capsys):
    workdir, first = tiny_run
    again = train.train_and_evaluate(_config(data_root), workdir)
    assert again["resumed_from"] == 4
    assert again["rmse"] == first["rmse"] and again["hct"] == first["hct"]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == evaluation.headline(again, workdir)
    assert last.startswith(f"results: {workdir}/results.json | plots: {workdir}/plots | ")
    assert "MultiPDENet" in last and "classical solver" in last


def test_one_train_step_lowers_the_loss_on_a_fixed_batch(data_root):
    """The train step's gradient is a descent direction of the window loss; with forward
    Euler, whose train step traces in a third of RK4's time (the tiny run trains RK4)."""
    config = _config(data_root, **{"optim.lr": 1e-4, "optim.warmup": 0,
                                   "model.integrator": "euler"})
    run = setup(config)
    emulator, task = run.emulator, make_task(config, run.emulator, run.data["train"])
    state = task.init_state(jax.random.key(0))
    batch = jax.tree.map(jnp.asarray, task.batch_fn(0, slice(None)))
    step = jax.jit(task.train_step)
    losses = []
    for _ in range(3):
        state, m = step(state, batch, jax.random.key(1))
        losses.append(float(m["loss"]))
    after = float(window_loss(emulator, state["params"], batch, config.train.window))
    assert after < losses[0], (losses, after)


def test_frozen_filters_without_networks_is_the_coarse_classical_solver(data_root):
    """MultiPDENet with frozen FD filters and no networks == the classical FD4+RK4 solver
    on the coarse grid with M steps per frame (Burgers: the dataset's own scheme)."""
    config = _config(data_root, **{"model.filter_mode": "frozen", "model.corrector": "none",
                                   "model.micro_net": "none", "model.macro_net": "none"})
    data = data_lib.load_or_generate(config.dataset, data_root)
    meta = data["metadata"]
    mpn = build_emulator(config, meta)
    classical = emulators.coarse_solver(meta, steps_per_frame=config.model.n_micro)
    u0 = jnp.asarray(data["test"][:, 0])
    a = mpn.rollout(mpn.init(jax.random.key(0), u0), u0, 5)
    b = classical.rollout({}, u0, 5)
    assert a.shape == b.shape == (5,) + u0.shape
    np.testing.assert_allclose(a, b, atol=2e-5)
    assert float(jnp.max(jnp.abs(a[-1] - u0))) > 1e-2  # the state really moved


@pytest.mark.parametrize("override,message", [
    ({"model.n_micro": 0}, r"'model.n_micro' = 0 is not allowed; expected an int >= 1"),
    ({"train.window": 50}, r"'train.window' = 50 .* must be <= 10"),
    ({"model.fno_modes": 9}, r"FNO with 9 modes, which needs a grid of at least 18 points; the coarse grid has 16"),
    ({"dataset.data.space_factor": 3}, r"not divisible|divisible"),
    ({"model.name": "transformer"}, r"'model.name' = 'transformer' .*one of"),
    ({"dataset.params.viscosity": -0.1}, r"'dataset.params.viscosity' = -0.1"),
    ({"model.frame_stride": 11}, r"'model.frame_stride' = 11 .* 11 frames, so it must be <= 10"),
    ({"model.frame_stride": 3, "train.window": 4},
     r"'train.window' = 4 .* 4 frames when read every 3 of 11 \(model.frame_stride\), so the window must be <= 3"),
])
def test_bad_configs_fail_before_compute(tmp_path, data_root, override, message):
    config = _config(data_root, **override)
    with pytest.raises(ValueError, match=message):
        train.train_and_evaluate(config, str(tmp_path / "w"))
    assert not os.path.exists(tmp_path / "w")


def test_frame_stride_reads_every_kth_frame_and_spans_them_in_one_macro_step(data_root):
    """`model.frame_stride` = 2: the data is every other saved frame, ΔT doubles, and the
    classical Physics Block (no networks) with 2M micro steps per ΔT is the stride-1 one
    with M, read every other frame."""
    none = {"model.filter_mode": "frozen", "model.corrector": "none", "model.micro_net": "none",
            "model.macro_net": "none", "model.n_micro": 2}
    one = _config(data_root, **none)
    two = _config(data_root, **{**none, "model.frame_stride": 2, "model.n_micro": 4,
                                "train.window": 2})
    validate(two)
    d1 = data_lib.load_or_generate(one.dataset, data_root)
    d2 = data_lib.load_or_generate(two.dataset, data_root, frame_stride=2)
    for split in ("train", "test"):
        np.testing.assert_array_equal(d2[split], d1[split][:, ::2])
    m1, m2 = d1["metadata"], d2["metadata"]
    assert m2["frame_dt"] == 2 * m1["frame_dt"] and m2["save_every"] == 2 * m1["save_every"]
    assert m2["n_frames"] == d2["test"].shape[1] == (m1["n_frames"] + 1) // 2
    assert data_lib.strided(m1, 1) is m1
    u0 = jnp.asarray(d1["test"][:, 0])
    a = build_emulator(two, m2)
    b = build_emulator(one, m1)
    ra, rb = a.rollout(a.init(jax.random.key(0), u0), u0, 3), b.rollout(b.init(jax.random.key(0), u0), u0, 6)
    np.testing.assert_allclose(ra, rb[1::2], atol=2e-5)
    assert float(jnp.max(jnp.abs(ra[0] - rb[0]))) > 1e-3   # one ΔT of stride 2 is not one of stride 1


def test_window_batches_are_pure_functions_of_the_step():
    trajs = np.random.default_rng(0).normal(size=(3, 12, 4, 4, 2)).astype(np.float32)
    a = data_lib.window_batch(trajs, 7, 0, 5, 3)
    b = data_lib.window_batch(trajs, 7, 0, 5, 3)
    c = data_lib.window_batch(trajs, 8, 0, 5, 3)
    np.testing.assert_array_equal(a["target"], b["target"])
    assert not np.array_equal(a["target"], c["target"])
    assert a["u0"].shape == (5, 4, 4, 2) and a["target"].shape == (5, 3, 4, 4, 2)
    # labels follow their input frame in the same trajectory
    for i in range(5):
        hits = [(n, t) for n in range(3) for t in range(9) if np.array_equal(trajs[n, t], a["u0"][i])]
        assert hits and any(np.array_equal(trajs[n, t + 1:t + 4], a["target"][i]) for n, t in hits)
    with pytest.raises(ValueError, match="shorter than the trajectories"):
        data_lib.window_batch(trajs, 0, 0, 2, 12)


def test_transfer_to_other_viscosity_uses_trained_params(tiny_run, data_root):
    workdir, _ = tiny_run
    out = evaluate_transfer(workdir, {"params.viscosity": 0.01, "data.n_train": 1}, "nu001",
                                  data_root=data_root)
    saved = json.load(open(os.path.join(workdir, "transfer", "nu001.json")))
    assert saved["rmse"] == out["rmse"] and np.isfinite(out["rmse"][0])
    assert saved["overrides"]["params.viscosity"] == 0.01
    with pytest.raises(ValueError, match="is not a run folder"):
        evaluate_transfer(os.path.dirname(workdir), {}, "x", data_root=data_root)


def test_window_curriculum_trains_each_phase_on_its_window(data_root):
    """`train.window_curriculum` (2, 3) over 4 steps: the loss of steps 0-1 is the 2-step
    window's, of steps 2-3 the 3-step window's, on the same (3-frame) batch.

    The phases are the train step's, whatever the emulator integrates with: forward Euler
    here, whose train step (two windows, `lax.switch`) traces in a quarter of RK4's time."""
    config = _config(data_root, **{"train.window": 3, "train.window_curriculum": (2, 3),
                                   "model.integrator": "euler"})
    run = setup(config)
    emulator, task = run.emulator, make_task(config, run.emulator, run.data["train"])
    state = task.init_state(jax.random.key(0))
    batch = jax.tree.map(jnp.asarray, task.batch_fn(0, slice(None)))
    assert batch["target"].shape[1] == 3
    short = {"u0": batch["u0"], "target": batch["target"][:, :2]}
    expect = {0: window_loss(emulator, state["params"], short, 2),
              1: window_loss(emulator, state["params"], short, 2),
              2: window_loss(emulator, state["params"], batch, 3),
              3: window_loss(emulator, state["params"], batch, 3)}
    assert float(expect[0]) != float(expect[2])
    train_step = jax.jit(task.train_step)
    for step, want in expect.items():
        _, m = train_step(dict(state, step=jnp.int32(step)), batch, None)
        np.testing.assert_allclose(float(m["loss"]), float(want), rtol=1e-5)


def test_window_curriculum_must_end_at_the_window(data_root):
    config = _config(data_root, **{"train.window": 3, "train.window_curriculum": (1, 2)})
    with pytest.raises(config_lib.ConfigError, match="window_curriculum.*end at train.window = 3"):
        validate(config)


def test_export_loads_without_the_dataset_and_reproduces_its_reference(tiny_run, tmp_path):
    from lib.multipdenet import runs
    workdir, _ = tiny_run
    out = runs.export_run(workdir, str(tmp_path / "exported"), n_frames=3)
    assert sorted(os.listdir(out)) == ["config.json", "params.npz", "reference.npz", "results.json"]
    with pytest.raises(FileExistsError, match="exported exists"):
        runs.export_run(workdir, out)
    exported = runs.load_run(out)
    full = runs.load_run(workdir)
    assert set(exported.data) == {"metadata", "reference"} and exported.step == full.step == 4
    for a, b in zip(jax.tree.leaves(exported.params), jax.tree.leaves(full.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ref = exported.data["reference"]
    frames = exported.emulator.rollout(exported.params, jnp.asarray(ref["u0"]), 3)
    np.testing.assert_allclose(np.asarray(frames), ref["frames"], rtol=1e-5, atol=1e-6)
    assert exported.data["metadata"]["frame_dt"] == full.data["metadata"]["frame_dt"]
    np.testing.assert_array_equal(ref["truth"], full.data["test"][0, 1:4])
    assert runs.load_run(workdir, step=4).step == 4                 # a kept step, by number
    with pytest.raises(ValueError, match="step 3 is not kept"):
        runs.load_run(workdir, step=3)
    with pytest.raises(ValueError, match="an exported run: it holds one state"):
        runs.load_run(out, step=4)
