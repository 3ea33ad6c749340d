"""Sharded, resumable dataset generation: equal to the one-batch generation bit for bit,
resumes without recomputing finished shards, redoes a corrupt shard, logs its progress."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest

from lib.pde import dataset
from tests.pde.test_pde_dataset import ROOT, tiny_spec
from tests.timeouts import HANG_TIMEOUT_S


def _one_batch(spec, root):
    path, cached = dataset.generate_dataset(spec, str(root))
    assert not cached
    return dataset.load_dataset(path, dataset.dataset_metadata(spec))


def _assert_same_data(found, expected):
    for split in dataset.SPLITS:
        for array in ("data", "times"):
            assert np.array_equal(found[split][array], expected[split][array]), (split, array)
    assert found["metadata"] == expected["metadata"]


class _Counting:
    """Stands in for `dataset.simulate_coarse`: counts batches, optionally raises at call `stop`."""

    def __init__(self, monkeypatch, stop=None):
        self.calls, self.stop, self.real = 0, stop, dataset.simulate_coarse
        monkeypatch.setattr(dataset, "simulate_coarse", self)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.stop:
            raise KeyboardInterrupt("interrupted")
        return self.real(*args, **kwargs)


@pytest.mark.parametrize("pde, n_train, n_test", [
    ("navier_stokes", 3, 2), ("kdv", 3, 2), ("gray_scott", 3, 2),
    ("burgers", 3, 3),          # Burgers: bit-identical when n_train + n_test is even
])
def test_sharded_generation_equals_one_batch_bit_for_bit(tmp_path, pde, n_train, n_test):
    spec = tiny_spec(pde, n_train=n_train, n_test=n_test)
    expected = _one_batch(spec, tmp_path / "one")
    lines = []
    path, cached = dataset.generate_dataset(spec, str(tmp_path / "sharded"), shard_size=2,
                                            log=lines.append)
    assert not cached and len(lines) == 2 + (n_test + 1) // 2   # train [0, 2) [2, 3); test alike
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    assert os.listdir(tmp_path / "sharded") == [os.path.basename(path)]   # .partial removed
    assert dataset.generate_dataset(spec, str(tmp_path / "sharded"), shard_size=2) == (path, True)


def test_interrupted_generation_resumes_without_recomputing(tmp_path, monkeypatch):
    spec = tiny_spec("kdv", n_train=5, n_test=2)        # shards train 0_2 2_4 4_5, test 0_2
    expected = _one_batch(spec, tmp_path / "one")
    root = str(tmp_path / "sharded")
    path = dataset.dataset_path(root, dataset.dataset_metadata(spec))
    first, lines = _Counting(monkeypatch, stop=3), []
    with pytest.raises(KeyboardInterrupt):
        dataset.generate_dataset(spec, root, shard_size=2, log=lines.append)
    assert sorted(os.listdir(path + dataset.PARTIAL)) == ["train_0_2.npz", "train_2_4.npz"]
    assert not os.path.exists(path) and len(lines) == 2
    # Resumed with no shard size given (the tool without --shard_size): the finished shards
    # are kept, the rest of each split is one batch: train [4, 5) and test [0, 2).
    again, lines = _Counting(monkeypatch), []
    assert dataset.generate_dataset(spec, root, log=lines.append) == (path, False)
    assert again.calls == 2
    assert lines[0] == f"{os.path.basename(path)}: resuming, 2/4 shards found in {path}.partial"
    assert re.fullmatch(r".*: shard test_0_2 written; 4/4 shards done \(2 found on disk\), "
                        r"[0-9.]+ s per trajectory, ETA 0s", lines[-1])
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    assert os.listdir(root) == [os.path.basename(path)]


def _truncate(file):
    with open(file, "r+b") as f:
        f.truncate(os.path.getsize(file) // 2)


def _flip_a_data_byte(file):
    with open(file, "r+b") as f:
        f.seek(300)                                  # inside the `data` array's bytes
        byte = f.read(1)
        f.seek(300)
        f.write(bytes([byte[0] ^ 0xFF]))


def _foreign(file):          # another shard's file under this shard's name
    shutil.copyfile(file.replace("train_0_2", "train_2_4"), file)


@pytest.mark.parametrize("damage, problem", [
    (_truncate, "unreadable"), (_flip_a_data_byte, "unreadable"),
    (_foreign, "holds shard 'kdv_[0-9a-f]+/train_2_4', expected 'kdv_[0-9a-f]+/train_0_2'"),
])
def test_a_corrupt_shard_is_moved_aside_and_simulated_again(tmp_path, monkeypatch, damage,
                                                            problem):
    spec = tiny_spec("kdv", n_train=5, n_test=2)
    expected = _one_batch(spec, tmp_path / "one")
    root = str(tmp_path / "sharded")
    path = dataset.dataset_path(root, dataset.dataset_metadata(spec))
    _Counting(monkeypatch, stop=3)
    with pytest.raises(KeyboardInterrupt):
        dataset.generate_dataset(spec, root, shard_size=2)
    shard = os.path.join(path + dataset.PARTIAL, "train_0_2.npz")
    damage(shard)
    with open(shard, "rb") as f:
        damaged = f.read()
    warnings = []
    monkeypatch.setattr(dataset.logging, "warning", lambda msg, *a: warnings.append(msg % a))
    again = _Counting(monkeypatch)
    assert dataset.generate_dataset(spec, root, shard_size=2, log=lambda _: None) == (path, False)
    assert again.calls == 3                          # train_0_2 again, train_4_5, test_0_2
    assert len(warnings) == 1 and re.fullmatch(
        rf"{re.escape(shard)}: {problem}.*; moved aside to {re.escape(shard)}\.corrupt-\d{{8}}T"
        r"\d{6}Z and simulating it again", warnings[0])
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    # The partial folder is kept only for the moved-aside copy, which is byte for byte the damaged file.
    (aside,) = os.listdir(path + dataset.PARTIAL)
    with open(os.path.join(path + dataset.PARTIAL, aside), "rb") as f:
        assert f.read() == damaged


def test_plan_shards_keeps_found_ranges_and_fills_the_gaps():
    assert dataset.plan_shards(7, 3, []) == [(0, 3), (3, 6), (6, 7)]
    assert dataset.plan_shards(7, None, []) == [(0, 7)]
    found = [(0, 2), (4, 7), (1, 3), (5, 9)]         # (1, 3) overlaps a kept one, (5, 9) is out of range
    assert dataset.plan_shards(7, 3, found) == [(0, 2), (2, 4), (4, 7)]
    assert dataset.plan_shards(9, 1, [(0, 2), (0, 4)]) == [(0, 4)] + [(i, i + 1) for i in range(4, 9)]


def test_progress_line_format_and_bad_shard_size(tmp_path):
    line = dataset.shard_progress_line("navier_stokes_0123", "train_4_6", 3, 62, 1, 45.04, 5400.0)
    assert line == ("navier_stokes_0123: shard train_4_6 written; 3/62 shards done (1 found on "
                    "disk), 45.0 s per trajectory, ETA 1h30m00s")
    with pytest.raises(ValueError, match=r"^shard_size = 0 must be > 0$"):
        dataset.generate_dataset(tiny_spec(), str(tmp_path), shard_size=0)
    assert os.listdir(tmp_path) == []


def test_command_line_processes_share_the_shards(tmp_path):
    tool = os.path.join(ROOT, "tools/make_pde_data.py")
    command = [sys.executable, tool, "--config=" + os.path.join(ROOT, "configs/pde_data/kdv.py:tiny"),
               f"--workdir={tmp_path / 'data'}", "--processes", "2"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    shown = subprocess.run([sys.executable, tool, "--help"], capture_output=True, text=True,
                           timeout=HANG_TIMEOUT_S, env=env)
    assert shown.returncode == 0 and "Flags of make_pde_data.py:" in shown.stdout
    assert "  --processes: Simulate with this many processes" in shown.stdout   # its own flags too
    run = subprocess.run(command + ["--shard_size=1"], capture_output=True, text=True,
                         timeout=HANG_TIMEOUT_S, env=env)
    assert run.returncode == 0, run.stderr
    path = run.stdout.strip().splitlines()[-1]
    assert len(re.findall(r"process \d \(pid \d+\) on core \d+", run.stderr)) == 2
    written = re.findall(r"shard (\w+) written; \d/4 shards done", run.stderr)
    assert sorted(written) == ["test_0_1", "test_1_2", "train_0_1", "train_1_2"]   # each once
    assert "kdv dataset written by 2 processes" in run.stderr
    assert sorted(os.listdir(tmp_path / "data")) == [os.path.basename(path)]
    with open(os.path.join(path, dataset.METADATA)) as f:
        assert json.load(f)[dataset.COMMAND].endswith("--shard_size=1 --processes=1 --noplot")
    spec = tiny_spec("kdv")   # the shards equal the one-batch data: the in-process tests above
    assert dataset.load_dataset(path, dataset.dataset_metadata(spec))["test"]["data"].shape[0] == 2


def test_child_commands_drop_the_processes_and_plot_flags_and_pin_round_robin():
    from tools.make_pde_data import child_commands, processes_have_shards

    assert not processes_have_shards({"processes": 2, "shard_size": 0})     # refused by absl
    assert processes_have_shards({"processes": 2, "shard_size": 1})
    assert processes_have_shards({"processes": 1, "shard_size": 0})

    argv = ["tools/make_pde_data.py", "--config=c.py:x", "--processes", "3", "--plot",
            "--config.data.seed=3", "--processes=3", "--shard_size=2"]
    commands = child_commands(argv, 3, {5, 1})
    expected = [sys.executable, "tools/make_pde_data.py", "--config=c.py:x", "--config.data.seed=3",
                "--shard_size=2", "--processes=1", "--noplot"]
    assert commands == [(expected, 1), (expected, 5), (expected, 1)]


def _held_by(process, file):
    """A claim on `file` written as the process `process` would write it."""
    with open(file + dataset.CLAIM, "w") as f:
        f.write(f"{socket.gethostname()} {process.pid}")


def _kdv_with_a_claimed_shard(tmp_path, process):
    """A kdv dataset (shards train 0_2 2_4 4_5, test 0_2) whose train_2_4 is claimed by `process`."""
    spec = tiny_spec("kdv", n_train=5, n_test=2)
    root = str(tmp_path / "sharded")
    path = dataset.dataset_path(root, dataset.dataset_metadata(spec))
    os.makedirs(path + dataset.PARTIAL)
    shard = os.path.join(path + dataset.PARTIAL, "train_2_4.npz")
    _held_by(process, shard)
    return spec, root, path, shard


def test_a_shard_claimed_by_a_live_process_is_left_to_it_and_waited_for(tmp_path, monkeypatch):
    other = subprocess.Popen(["sleep", str(HANG_TIMEOUT_S)])
    try:
        spec, root, path, shard = _kdv_with_a_claimed_shard(tmp_path, other)
        expected = _one_batch(spec, tmp_path / "one")
        sleeps = []

        def other_finishes(seconds):   # the other process writes its shard and drops its claim
            sleeps.append(seconds)
            dataset._write_shard(shard, expected["train"]["data"][2:4],
                                 f"{os.path.basename(path)}/train_2_4")
            os.remove(shard + dataset.CLAIM)

        monkeypatch.setattr(dataset.time, "sleep", other_finishes)
        ours, lines = _Counting(monkeypatch), []
        assert dataset.generate_dataset(spec, root, shard_size=2, log=lines.append) == (path, False)
    finally:
        other.kill()
        other.wait()
    assert ours.calls == 3 and sleeps == [dataset.CLAIM_POLL_S]   # train_0_2, train_4_5, test_0_2
    name = os.path.basename(path)
    assert f"{name}: waiting for 1 shard(s) claimed by {socket.gethostname()}:{other.pid}" in lines
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    assert os.listdir(root) == [name]                       # claims and shards removed


def test_a_claim_left_by_an_exited_process_is_taken_over(tmp_path, monkeypatch):
    gone = subprocess.Popen(["true"])
    gone.wait()
    spec, root, path, shard = _kdv_with_a_claimed_shard(tmp_path, gone)
    expected = _one_batch(spec, tmp_path / "one")
    monkeypatch.setattr(dataset.time, "sleep", lambda s: pytest.fail("waited for a dead process"))
    ours, lines = _Counting(monkeypatch), []
    assert dataset.generate_dataset(spec, root, shard_size=2, log=lines.append) == (path, False)
    assert ours.calls == 4
    assert f"{shard}.claim: left by process {gone.pid}, which has exited; taking the shard over" in lines
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    assert os.listdir(root) == [os.path.basename(path)]


def test_a_waiting_process_returns_the_dataset_another_one_assembled(tmp_path, monkeypatch):
    other = subprocess.Popen(["sleep", str(HANG_TIMEOUT_S)])
    try:
        spec, root, path, shard = _kdv_with_a_claimed_shard(tmp_path, other)
        expected = _one_batch(spec, tmp_path / "one")

        def other_assembles(_):        # the claim's holder finishes every shard and the folder
            os.remove(shard + dataset.CLAIM)
            monkeypatch.setattr(dataset.time, "sleep", lambda s: pytest.fail("waited twice"))
            assert dataset.generate_dataset(spec, root, shard_size=2) == (path, False)

        monkeypatch.setattr(dataset.time, "sleep", other_assembles)
        assert dataset.generate_dataset(spec, root, shard_size=2, log=lambda _: None) == (path, True)
    finally:
        other.kill()
        other.wait()
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)), expected)
    assert os.listdir(root) == [os.path.basename(path)]


def test_a_process_that_renames_second_returns_the_first_ones_folder(tmp_path, monkeypatch):
    spec = tiny_spec("kdv", n_train=3, n_test=2)
    root = str(tmp_path / "sharded")
    path = dataset.dataset_path(root, dataset.dataset_metadata(spec))
    rename = os.rename

    def another_process_renames_first(src, dst):
        if dst == path and not os.path.exists(dst):
            shutil.copytree(src, dst)           # its identical folder lands just before ours
        return rename(src, dst)

    monkeypatch.setattr(os, "rename", another_process_renames_first)
    assert dataset.generate_dataset(spec, root, shard_size=2, log=lambda _: None) == (path, True)
    assert os.listdir(root) == [os.path.basename(path)]     # our copy and the shards removed
    monkeypatch.setattr(os, "rename", rename)
    _assert_same_data(dataset.load_dataset(path, dataset.dataset_metadata(spec)),
                      _one_batch(spec, tmp_path / "one"))
