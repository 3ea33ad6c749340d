"""tests/experiment_runs.py: one tiny run per (experiment, config) in a test session, reused
in this process and, through the folder it leaves, by another worker."""
import os
import types

import ml_collections
import pytest

from tests import experiment_runs


def _fake_train(name):
    """An experiment module whose run writes a file and counts its calls."""
    mod = types.ModuleType(name)
    mod.calls = []

    def train_and_evaluate(config, workdir):
        mod.calls.append(workdir)
        if config.fail:
            open(os.path.join(workdir, f"half_written_{len(mod.calls)}"), "w").close()
            raise RuntimeError("diverged")
        with open(os.path.join(workdir, "results.json"), "w") as f:
            f.write("{}")
        return {"lr": config.lr, "workdir": workdir}

    mod.train_and_evaluate = train_and_evaluate
    return mod


def _config(**kw):
    return ml_collections.ConfigDict({"lr": 0.1, "fail": False, **kw})


def test_same_config_runs_once_another_config_runs_again(tmp_path_factory, request):
    train = _fake_train(f"fake_train_{request.node.name}")
    first = experiment_runs.tiny_run(tmp_path_factory, train, _config())
    again = experiment_runs.tiny_run(tmp_path_factory, train, _config())
    assert again == first and train.calls == [first[0]]
    assert first[1] == {"lr": 0.1, "workdir": first[0]}
    assert os.path.exists(os.path.join(first[0], "results.json"))
    other = experiment_runs.tiny_run(tmp_path_factory, train, _config(), overrides={"lr": 0.2})
    assert other[0] != first[0] and other[1]["lr"] == 0.2 and len(train.calls) == 2


def test_another_process_reads_the_finished_run_back(tmp_path_factory, request, monkeypatch):
    train = _fake_train(f"fake_train_{request.node.name}")
    first = experiment_runs.tiny_run(tmp_path_factory, train, _config())
    monkeypatch.setattr(experiment_runs, "_RUNS", {})        # as a second worker sees it
    again = experiment_runs.tiny_run(tmp_path_factory, train, _config())
    assert again == first and len(train.calls) == 1


def test_a_failed_run_is_not_reused_and_its_folder_is_cleared(tmp_path_factory, request):
    train = _fake_train(f"fake_train_{request.node.name}")
    with pytest.raises(RuntimeError, match="diverged"):
        experiment_runs.tiny_run(tmp_path_factory, train, _config(fail=True))
    workdir = train.calls[0]
    assert os.listdir(workdir) == ["half_written_1"]
    with pytest.raises(RuntimeError, match="diverged"):
        experiment_runs.tiny_run(tmp_path_factory, train, _config(fail=True))
    assert train.calls == [workdir, workdir] and os.listdir(workdir) == ["half_written_2"]
    assert experiment_runs.run_key(train, _config(fail=True)) != experiment_runs.run_key(
        train, _config())
