"""`workdir.prepare`'s config identity on resume: the `run` block and the resumable train
keys may change, a new key resumes only with its declared old-behaviour value, and any
other change is refused naming every key, before config.json is touched."""
import json
import os

import pytest

from lib.common import workdir as wd

BASE = {"model": {"hidden": 32, "depth": 2}, "train": {"num_steps": 5, "seed": 0},
        "run": {"time_budget_s": 300.0, "workers": 4}}


def _cfg(**changes):
    """BASE with dotted `changes` applied (None deletes the key)."""
    cfg = json.loads(json.dumps(BASE))
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        node = cfg
        for p in parents:
            node = node.setdefault(p, {})
        if value is None:
            del node[leaf]
        else:
            node[leaf] = value
    return cfg


def _stored(workdir):
    with open(os.path.join(workdir, wd.CONFIG)) as f:
        return json.load(f)


@pytest.fixture
def workdir(tmp_path):
    wd.prepare(str(tmp_path), BASE)
    return str(tmp_path)


def test_run_block_and_resumable_keys_may_change_and_are_stored(workdir):
    new = _cfg(run__time_budget_s=900.0, run__workers=None, train__num_steps=50,
               train__log_every=7)
    wd.prepare(workdir, new, steps_extendable=True)
    assert _stored(workdir) == new
    wd.prepare(workdir, _cfg(run=None, train__num_steps=50))   # no run block at all
    assert "run" not in _stored(workdir)


def test_changed_values_are_refused_naming_every_key(workdir):
    with pytest.raises(ValueError) as err:
        wd.prepare(workdir, _cfg(model__hidden=64, train__seed=1, run__workers=8))
    msg = str(err.value)
    assert "'model.hidden': 32 in the workdir, 64 now" in msg
    assert "'train.seed': 0 in the workdir, 1 now" in msg
    assert "run.workers" not in msg                  # run-time only, never a reason
    assert _stored(workdir) == BASE                  # nothing written


def test_a_stored_key_missing_now_is_refused(workdir):
    with pytest.raises(ValueError, match=r"'model.depth' is in the workdir's config.json, "
                                         r"not in this config"):
        wd.prepare(workdir, _cfg(model__depth=None))


def test_new_key_resumes_only_with_its_declared_old_value(workdir, caplog):
    new = _cfg(model__dropout=0.0, model__norm={"kind": "layer", "eps": 1e-6})
    with pytest.raises(ValueError) as err:           # undeclared
        wd.prepare(workdir, new)
    assert "'model.dropout' is new (= 0.0) and not declared" in str(err.value)
    assert "'model.norm.kind' is new" in str(err.value)
    assert _stored(workdir) == BASE
    with pytest.raises(ValueError, match=r"'model.dropout' is new and 0.1 now, but declared "
                                         r"0.0"):
        wd.prepare(workdir, _cfg(model__dropout=0.1, model__norm={"kind": "layer", "eps": 1e-6}),
                   added={"model.dropout": 0.0, "model.norm": {"kind": "layer", "eps": 1e-6}})
    with pytest.raises(ValueError, match=r"'model.norm.eps' is new and 1e-05 now, but declared "
                                         r"1e-06"):
        wd.prepare(workdir, _cfg(model__dropout=0.0, model__norm={"kind": "layer", "eps": 1e-5}),
                   added={"model.dropout": 0.0, "model.norm": {"kind": "layer", "eps": 1e-6}})
    # Declared (a leaf, and a whole new block) with the old behaviour's value: accepted,
    # logged, and stored, so the next resume compares against the full config.
    wd.prepare(workdir, new, added={"model.dropout": 0.0,
                                    "model.norm": {"kind": "layer", "eps": 1e-6}})
    assert "'model.dropout' is new" in caplog.text and "declared behaviour" in caplog.text
    assert _stored(workdir) == new
    wd.prepare(workdir, new)                         # from now on an ordinary key
    with pytest.raises(ValueError, match=r"'model.dropout': 0.0 in the workdir, 0.2 now"):
        wd.prepare(workdir, _cfg(model__dropout=0.2, model__norm={"kind": "layer", "eps": 1e-6}),
                   added={"model.dropout": 0.2})


def test_a_num_steps_change_is_refused_unless_the_experiment_declares_it_free(workdir):
    # Schedules (cosine decay) are built from train.num_steps: a resume with another value
    # would follow neither schedule, so it is refused in one line naming both values.
    with pytest.raises(wd.WorkdirError) as err:
        wd.prepare(workdir, _cfg(train__num_steps=50))
    msg = str(err.value)
    assert "'train.num_steps': 5 in the workdir, 50 now" in msg
    assert "use a new --workdir to train for 50 steps" in msg
    assert "--config.train.num_steps=5" in msg and "\n" not in msg
    assert _stored(workdir) == BASE                  # nothing written
    wd.prepare(workdir, _cfg(train__num_steps=50), steps_extendable=True)
    assert _stored(workdir)["train"]["num_steps"] == 50


def test_a_key_stored_under_its_old_name_resumes_as_the_new_name(tmp_path, caplog):
    # A run recorded before `model.hidden` was renamed `model.width` (declared with
    # `Key(..., was="model.hidden")`, passed as `renamed=renamed_of(KEYS)`).
    workdir = str(tmp_path)
    wd.prepare(workdir, BASE)
    renamed = {"model.hidden": "model.width"}
    with pytest.raises(ValueError) as err:           # another value: refused, naming the key
        wd.prepare(workdir, _cfg(model__hidden=None, model__width=64), renamed=renamed)
    assert "'model.width' (stored as 'model.hidden'): 32 in the workdir, 64 now" in str(err.value)
    assert _stored(workdir) == BASE                  # nothing written
    new = _cfg(model__hidden=None, model__width=32)
    wd.prepare(workdir, new, renamed=renamed)        # the same value: resumes, logged
    assert "'model.hidden'" in caplog.text and "read as 'model.width'" in caplog.text
    assert _stored(workdir) == new                   # stored under the new name from now on
    assert "hidden" not in _stored(workdir)["model"]
    wd.prepare(workdir, new, renamed=renamed)        # nothing left to rename
    other = str(tmp_path / "other")
    wd.prepare(other, BASE)
    with pytest.raises(ValueError, match=r"'model.width' is new"):   # undeclared: refused
        wd.prepare(other, new)
