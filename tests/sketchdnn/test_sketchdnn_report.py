"""The SketchDNN targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json)."""
from lib.sketchdnn.report import markdown, render, targets

VALIDITY = {"dangling_fraction": 0.5, "closed_rate": 0.25}
REFERENCE = {"fd": 1.5, "precision": 0.75, "recall": 0.8, "validity": VALIDITY,
             "type_tv": 0.02, "count_tv": 0.03}
NLL = {"total": 1303.456, "total_se": 12.0, "prior": 1.0, "diffusion": 1200.25,
       "reconstruction": 102.2}
RUN = dict(REFERENCE, nll=NLL, repaired_fraction=0.1, train={"num_params": 262144})
RESULTS = {"reference": REFERENCE,
           "runs": {"gaussian_softmax": RUN,
                    "gaussian_softmax_pe": dict(RUN, fd=2.0, nll=dict(NLL, total=1400.0))},
           "encoder_test_accuracy": 0.9, "data": {"num_test": 64, "num_train": 256, "num_slots": 16},
           "budget": {"num_samples": 128, "sample_steps": 50, "diffusion_steps": 100,
                      "train_steps_per_model": 3000},
           "machine": "x86_64, 2 CPU cores", "wall_s": 99.5}
CONFIG = {"tag": "tiny", "optim": {"batch_size": 32}, "model": {"width": 64, "depth": 2}}

EXPECTED = """\
| model | FD ↓ | precision ↑ | recall ↑ | NLL bound, bits/sketch ↓ | prior / diffusion / reconstruction | dangling ends ↓ | closed profiles ↑ | type TV ↓ | count TV ↓ | repaired prims | params |
|---|---|---|---|---|---|---|---|---|---|---|---|
| held-out data (floor) | 1.5 | 0.75 | 0.8 | — | — | 0.5 | 0.25 | 0.02 | 0.03 | — | — |
| Gaussian-Softmax (SketchDNN) | 1.5 | 0.75 | 0.8 | 1303.46 ± 12.00 | 1.00 / 1200.25 / 102.20 | 0.5 | 0.25 | 0.02 | 0.03 | 0.1 | 262,144 |
| Gaussian-Softmax + positional enc. | 2 | 0.75 | 0.8 | 1400.00 ± 12.00 | 1.00 / 1200.25 / 102.20 | 0.5 | 0.25 | 0.02 | 0.03 | 0.1 | 262,144 |

| target | result |
|---|---|
| Gaussian-Softmax beats one-hot Gaussian and D3PM on FD | not run |
| Gaussian-Softmax beats one-hot Gaussian and D3PM on the NLL bound | not run |
| positional-encoding ablation does worse (FD and NLL) | **MET** (one seed: not a ranking) |

Metric encoder test accuracy 0.900; FD/precision/recall against 64 held-out sketches with 128 samples per model (50 of T = 100 reverse steps); NLL bound over the held-out set (± one standard error).

Config `tiny`: 3000 training steps per model (batch 32, width 64, depth 2), 256 training sketches in 16 slots; measured on x86_64, 2 CPU cores (load average not recorded) in 100 s."""


def test_render_of_a_fixture_is_the_expected_markdown():
    """Targets without both baselines read 'not run'; the PE ablation (higher FD and NLL) is
    met; NLL terms in 2 decimals, parameter counts with separators, the config line last."""
    results = dict(RESULTS, targets=targets(RESULTS))
    assert results["targets"]["pe_does_worse"]["met"] is True
    assert results["targets"]["fd_beats_baselines"] is None
    assert render(results, CONFIG) == EXPECTED


def test_bounds_under_both_parameterisations_get_a_column_with_the_tighter_in_bold():
    by = {"two_log_p": dict(NLL, total=2076.1, total_se=13.4),
          "embedding_mean": dict(NLL, total=1037.25, total_se=8.8)}
    gs = dict(RUN, nll=dict(by["embedding_mean"], x0_logits="embedding_mean", by_x0_logits=by))
    results = dict(RESULTS, runs={"gaussian_softmax": gs, "d3pm": RUN})
    text = markdown(dict(results, targets=targets(results)))
    assert "| NLL bound, bits/sketch ↓ | by reverse x̂₀ logits (the tighter in bold) |" in text
    assert ("| 1037.25 ± 8.80 | 2·log p̂ 2076.10 ± 13.40 / **Σ p̂·u 1037.25 ± 8.80** |"
            in text)
    assert "| D3PM labels | 1.5 | 0.75 | 0.8 | 1303.46 ± 12.00 | — | 1.00 /" in text
    assert "the tighter of the bounds under the two reverse parameterisations" in text
