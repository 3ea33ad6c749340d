"""The README block re-renders byte-identical from a stored results.json (a small fixture)."""
from lib.gmflow.report import render

_TRAIN = {"steps": 10, "resumed_from": 0, "train_s": 3.2, "first_loss": 1.5, "last_loss": 0.25}
RESULTS = {
    "machine": "x86_64, 2 CPU cores", "tag": "tiny", "budget": {"train_steps_per_model": 10},
    "wall_s": 12.4, "targets": {"toy": None},
    "toy": {"checkerboard": {
        "reference": {"swd": 0.01, "mmd": 0.0002, "in_square": 0.99},
        "models": {
            "gm2": {"components": 2, "loss": "trans", "train": dict(_TRAIN, resumed_from=10),
                    "solvers": {"gm_ode2": {"nfe": {
                        "1": {"swd": 0.5, "mmd": 0.004, "in_square": 0.6},
                        "2": {"swd": 0.25, "mmd": 0.002, "in_square": 0.7}}}}},
            "fm": {"components": 1, "loss": "l2", "train": _TRAIN,
                   "solvers": {"heun": {"nfe": {
                       "1": None, "2": {"swd": 0.75, "mmd": 0.008, "in_square": 0.5}}}}}}}},
    "digits": {
        "dataset": "digits", "image_shape": [8, 8, 1], "network": "mlp",
        "classifier_test_accuracy": 0.95, "real": {"saturation": 0.1, "count": 100},
        "train": {"gm": _TRAIN},
        "nfe": {"4": {"pg": {"solver": "gm_sde2", "sweep": [
            {"scale": 0.1, "fd": 3.14159, "precision": 0.8, "recall": 0.5, "saturation": 0.2,
             "out_of_range": 0.01, "accuracy": 0.9}]}}}},
}

EXPECTED = """\
| target | measured | status |
|---|---|---|

**checkerboard**: sliced W₂ to fresh data samples (lower is better; two independent data sets give 0.010); in-square fraction in brackets (data: 0.990)

| model | solver | NFE 1 | NFE 2 |
|---|---|---|---|
| flow matching (L2) | heun | n/a | 0.750 (0.50) |
| GMFlow K=2 | gm_ode2 | 0.500 (0.60) | 0.250 (0.70) |

MMD² (×10³) at NFE 1, 2: fm/heun: n/a, 8.0; gm2/gm_ode2: 4.0, 2.0 (data vs data: 0.2).

Training: fm: loss 1.500 → 0.250 in 10 steps (3 s); gm2: loss 1.500 → 0.250 in 10 steps (resumed at step 10, 3 s in this run).

**digits** (8×8, mlp denoisers; one seed; real reference set: 100 images)

| NFE | method (solver) | scale | FD ↓ | precision ↑ | recall ↑ | saturation (data 0.100) | out of [0,1] | class acc. |
|---|---|---|---|---|---|---|---|---|
| 4 | prob. guidance, GMFlow (gm_sde2) | 0.1 | 3.14 | 0.800 | 0.500 | 0.200 | 0.010 | 0.900 |

Metric classifier test accuracy 0.950. Training: gm: loss 1.500 → 0.250 in 10 steps (3 s).

Config `tiny`: 10 training steps per model; measured on x86_64, 2 CPU cores (load average not recorded) in 12 s."""


def test_render_of_a_fixture_is_the_expected_markdown():
    """Flow matching sorts first, a missing Heun NFE reads n/a, MMD is ×10³, a resumed model
    says so, and the budget/machine line closes the block."""
    assert render(RESULTS, {"tag": "tiny"}) == EXPECTED
