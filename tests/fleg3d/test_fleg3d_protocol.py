"""Incremental protocol: what each session may see, metrics in closed form, scoring rules."""
import functools

import jax
import numpy as np
import pytest

from lib.fleg3d import methods, protocol, scoring


def _toy_protocol():
    # 4 base classes, 2 sessions of 2 classes; rows: train 3/class, pools 4/class, tests 2/class
    plan = protocol.session_classes(8, 4, 2)
    labels, rows = [], {}

    def add(key, classes, n):
        start = len(labels)
        labels.extend(np.repeat(classes, n))
        rows[key] = np.arange(start, len(labels))
    add("train", [0, 1, 2, 3], 3)
    add("pool", [4, 5, 6, 7], 4)
    for s, cl in enumerate(plan):
        add(f"test{s}", list(cl), 2)
    labels = np.array(labels)
    p = protocol.Protocol("toy", labels, plan, rows["train"],
                          {c: rows["pool"][labels[rows["pool"]] == c] for c in range(4, 8)},
                          tuple(rows[f"test{s}"] for s in range(3)))
    protocol.check_disjoint(p)
    return p


class Recorder:
    """A method that logs every row it is given and predicts the true label when allowed."""

    def __init__(self, labels):
        self.labels, self.learned, self.asked = labels, [], []

    def init(self):
        return ()

    def learn(self, state, session):
        self.learned.append((session.index, session.support.copy()))
        return state

    def predict(self, state, rows, seen):
        self.asked.append((len(seen), rows.copy()))
        return self.labels[rows]


def test_sessions_never_see_test_rows_or_later_classes():
    p = _toy_protocol()
    rec = Recorder(p.labels)
    res = protocol.run(p, rec, shots=2, seed=0, repeat=1)
    test_rows = np.concatenate(p.tests)
    seen = set()
    for (s, support), (n_seen, asked) in zip(rec.learned, rec.asked):
        assert not np.intersect1d(support, test_rows).size          # never a test cloud
        seen |= set(p.session_classes[s])
        assert set(p.labels[support]) <= set(p.session_classes[s])  # only this session's classes
        assert set(p.labels[asked]) <= seen                          # tests of seen classes only
        assert n_seen == len(seen)
        if s > 0:
            assert len(support) == 2 * len(p.session_classes[s])    # K shots per class
    assert res["acc"] == [1.0, 1.0, 1.0] and res["harmonic"] == [None, 1.0, 1.0]


def test_metrics_closed_form_and_drop():
    assert protocol.harmonic(0.8, 0.4) == pytest.approx(2 * 0.32 / 1.2)
    assert protocol.harmonic(0.0, 0.0) == 0.0
    s = protocol.summarise([{"acc": [0.8, 0.6], "acc_old": [0.8, 0.7], "acc_new": [None, 0.5],
                             "harmonic": [None, 0.5833]},
                            {"acc": [0.8, 0.4], "acc_old": [0.8, 0.5], "acc_new": [None, 0.3],
                             "harmonic": [None, 0.375]}])
    assert s["last_acc"] == pytest.approx(0.5) and s["drop"] == pytest.approx(37.5)
    assert s["acc_new"][0] is None and s["acc_new"][1] == pytest.approx(0.4)


def test_bad_session_plans_and_leaks_are_errors():
    with pytest.raises(ValueError, match="cannot be split into 4 base classes and sessions of 3"):
        protocol.session_classes(8, 4, 3)
    p = _toy_protocol()
    leaky = p._replace(base_train=np.concatenate([p.base_train, p.tests[0][:1]]))
    with pytest.raises(ValueError, match="overlap test rows"):
        protocol.check_disjoint(leaky)
    with pytest.raises(ValueError, match="fewer than 5 shots"):
        protocol.sessions(p, shots=5, seed=0, repeat=0)


def test_support_calibration_removes_a_per_class_offset():
    # class 1's prompt is far from every embedding: raw scores favour class 0 everywhere,
    # eq. (5) measures each class against its own support and recovers the right labels
    text = np.array([[1.0, 0, 0], [0, 0, 1.0]], np.float32)
    z = np.array([[1, 0.1, 0], [1, -0.1, 0], [0.2, 1, 0], [0.2, 1.1, 0]], np.float32)
    emb = {"z": z, "e": np.zeros_like(z)}
    sess = protocol.Session(0, (0, 1), np.array([0, 2]), np.array([0, 1]))
    for calibrate, expect in ((False, [0, 0]), (True, [0, 1])):
        m = methods.PromptPrototype(emb, text, "prompt+proto", 0.2, calibrate=calibrate)
        state = m.learn(m.init(), sess)
        assert list(m.predict(state, np.array([1, 3]), (0, 1))) == expect


def test_class_means_and_loss_without_geometry():
    x = np.array([[1.0, 0], [3, 0], [0, 2]], np.float32)
    np.testing.assert_allclose(scoring.class_means(x, np.array([0, 0, 2]), 3),
                               [[2, 0], [0, 0], [0, 2]])
    text = np.eye(2, 4, dtype=np.float32)
    out = {"z": np.array([[1.0, 0, 0, 0], [0, 1, 0, 0]], np.float32), "e": np.zeros((2, 4), np.float32)}
    loss, m = jax.jit(functools.partial(scoring.base_loss, temperature=0.1, align_weight=10.0))(
        out, np.array([0, 1]), text)
    assert float(m["align_loss"]) == 0.0                         # no geometric embedding, no term
    assert float(loss) == pytest.approx(float(np.log1p(np.exp(-10.0))), rel=2e-2)
