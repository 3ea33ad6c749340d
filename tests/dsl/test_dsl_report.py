"""The DSL README block from a hand-written results dict, byte for byte."""
from lib.dsl import report


def _by(accs, sd=0.0):
    return {f"f{100 * f:g}": {"fraction": f, "n_train": n, "acc": a, "acc_sd": sd,
                              "acc_per_seed": [a, a]}
            for f, n, a in zip((0.05, 0.1, 1.0), (6, 12, 125), accs)}


def test_render_is_the_tables_targets_toy_and_run_line():
    dsl = {"by_fraction": _by((0.594, 0.698, 0.953), 0.04), "num_params": 2248, "steps": 500,
           "train_s": 316.2, "lines": {"mean_length": 1.8123, "exited_share": 1.0}}
    mlp = {"by_fraction": _by((0.906, 0.953, 1.0)), "num_params": 2226, "width": 39,
           "steps": 500, "train_s": 24.4}
    res = {"datasets": {"wine": {"n_train": 125, "dim": 13, "num_classes": 3,
                                 "models": {"dsl": dsl, "mlp": mlp}}},
           "toy": {"n_train": 200, "steps": 100, "test_acc": 0.975, "mean_length": 1.234,
                   "exited_share": 0.9},
           "machine": "test machine", "wall_s": 361.0}
    res["targets"] = report.targets(res)
    assert report.render(res, {"tag": "dsl_quick"}) == """\
| data set (n_train, dim, classes) | fraction (rows) | DSL acc | MLP acc | DSL − MLP |
|---|---|---|---|---|
| wine (125, 13, 3) | 5 % (6) | 59.4 ± 4.0 | 90.6 ± 0.0 | -31.2 |
|  | 10 % (12) | 69.8 ± 4.0 | 95.3 ± 0.0 | -25.5 |
|  | 100 % (125) | 95.3 ± 4.0 | 100.0 ± 0.0 | -4.7 |

| data set | DSL params | MLP params (width) | seeds | steps | DSL train s | MLP train s | \
mean line length | lines exiting Ω at both ends |
|---|---|---|---|---|---|---|---|---|
| wine | 2248 | 2226 (39) | 2 | 500 | 316 | 24 | 1.81 | 100 % |

- Full data, DSL within 1 point of the MLP on every set: **MISSED** (DSL − MLP, points: \
wine -4.7).
- Low data (fractions ≤ 10 %), DSL ahead on most sets: **MISSED** (mean DSL − MLP, points: \
wine -28.4).

- 2-D toy (two moons, 200 training points, 100 steps): DSL test accuracy 97.5 %, mean line \
length 1.23, 90 % of lines exit at both ends.

Config `dsl_quick`; measured on test machine (load average not recorded) in 6 min."""
