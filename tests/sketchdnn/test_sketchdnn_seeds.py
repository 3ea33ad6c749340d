"""Seed summaries: mean ± sample std, and a ranking only beyond 2 seed std."""
import numpy as np
import pytest

from lib.sketchdnn import seeds

REF = {"fd": 2.5, "precision": 0.9, "recall": 0.9, "type_tv": 0.01, "count_tv": 0.02,
       "validity": {"dangling_fraction": 0.0, "closed_rate": 1.0}}


def _run(fd, nll, curve=()):
    return {"fd": fd, "precision": 0.5, "recall": 0.5, "type_tv": 0.1, "count_tv": 0.1,
            "nll": {"total": nll}, "validity": {"dangling_fraction": 0.9, "closed_rate": 0.0},
            "curve": [{"step": s, "fd": f, "dangling_fraction": d, "closed_rate": 0.0}
                      for s, f, d in curve]}


def _results(gs_fd, d3_fd, oh_fd, gs_nll=(900, 900, 900), base_nll=(1000, 1000, 1000)):
    return [{"reference": REF,
             "runs": {"gaussian_softmax": _run(gs_fd[i], gs_nll[i], [(10, gs_fd[i] + 1, 0.5)]),
                      "d3pm": _run(d3_fd[i], base_nll[i]),
                      "onehot_gaussian": _run(oh_fd[i], base_nll[i])}} for i in range(3)]


def test_mean_and_sample_std_over_seeds():
    s = seeds.summarise(_results((1.0, 2.0, 6.0), (10, 10, 10), (10, 10, 10)))
    mean, std, n = s["gaussian_softmax"]["fd"]
    assert (mean, n) == (3.0, 3) and std == pytest.approx(np.sqrt(7.0))   # ddof = 1
    c = seeds.curve_summary(_results((1.0, 2.0, 6.0), (10, 10, 10), (10, 10, 10)))
    assert c["gaussian_softmax"][10]["fd"][0] == pytest.approx(4.0) and c["d3pm"] == {}


def test_models_are_ranked_only_beyond_two_seed_std():
    # GS 3 ± 2.65 vs 10 ± 0: 7 > 2·2.65 = 5.3 -> better; vs one-hot 7 ± 1: 4 < 5.3 -> tied
    s = seeds.summarise(_results((1.0, 2.0, 6.0), (10, 10, 10), (6, 7, 8)))
    assert seeds.compare(s, "gaussian_softmax", "d3pm", "fd") == "better"
    assert seeds.compare(s, "gaussian_softmax", "onehot_gaussian", "fd") == "tied"
    assert seeds.compare(s, "d3pm", "gaussian_softmax", "fd") == "worse"
    c = seeds.claims(s)
    assert c["fd"]["verdict"] == "TIED"
    assert c["nll"]["verdict"] == "MET"          # 900 ± 0 against 1000 ± 0
    worse = seeds.claims(seeds.summarise(_results((9, 9, 9), (1, 1, 1), (20, 20, 20))))
    assert worse["fd"] == {"verdict": "MISSED", "onehot_gaussian": "better", "d3pm": "worse"}
    text = seeds.markdown(_results((1.0, 2.0, 6.0), (10, 10, 10), (6, 7, 8)), [0, 1, 2],
                          curve_samples=250)
    assert "| Gaussian-Softmax (SketchDNN) | 3 | 3 ± 2.65 |" in text
    assert "**TIED** (tied with one-hot Gaussian labels, better than D3PM labels)" in text
    assert "250 samples per point" in text


def test_runs_on_different_data_or_a_single_seed_are_refused():
    r = _results((1, 2, 3), (1, 2, 3), (1, 2, 3))
    with pytest.raises(ValueError, match="at least 2 seeds"):
        seeds.summarise(r[:1])
    r[1] = dict(r[1], reference=dict(REF, fd=3.0))
    with pytest.raises(ValueError, match="different held-out floors"):
        seeds.summarise(r)


def test_positional_encoding_claim_and_the_bound_by_parameterisation():
    res = _results((1.0, 2.0, 3.0), (10, 10, 10), (10, 10, 10))
    for i, r in enumerate(res):
        gs = r["runs"]["gaussian_softmax"]
        gs["nll"] = {"total": 900 + i, "x0_logits": "embedding_mean",
                     "by_x0_logits": {"two_log_p": {"total": 2000.0 + i},
                                      "embedding_mean": {"total": 900.0 + i}}}
        r["runs"]["gaussian_softmax_pe"] = _run(20.0 + i, 950 + i)   # FD worse, NLL worse
    s = seeds.summarise(res)
    assert s["gaussian_softmax"]["nll_two_log_p"][:2] == (2001.0, 1.0)
    assert "nll_two_log_p" not in s["d3pm"]
    assert seeds.claims(s)["pe"] == {"verdict": "MET", "fd": "worse", "nll": "worse"}
    text = seeds.markdown(res, [0, 1, 2])
    assert "| NLL bound, bits/sketch ↓ | NLL, x̂₀ logits 2·log p̂ ↓ | NLL, x̂₀ logits Σ p̂·u ↓ |" \
        in text
    assert "| 901 ± 1 | 2001 ± 1 | **901 ± 1** |" in text     # the tighter in bold
    assert "| D3PM labels | 3 | 10 ± 0 | 0.5 ± 0 | 0.5 ± 0 | 1000 ± 0 | — | — |" in text
    assert ("| positional-encoding ablation does worse (FD and NLL bound) | **MET** "
            "(FD worse, NLL worse, against Gaussian-Softmax (SketchDNN) without it) |") in text
    # PE's NLL within 2 seed std of Gaussian-Softmax's (901 ± 2 vs 901 ± 1): TIED
    for i, r in enumerate(res):
        r["runs"]["gaussian_softmax_pe"]["nll"] = {"total": 899.0 + 2 * i}
    assert seeds.claims(seeds.summarise(res))["pe"]["verdict"] == "TIED"
    assert seeds.claims(seeds.summarise(_results((1, 2, 3), (1, 2, 3), (1, 2, 3))))["pe"] == {
        "verdict": "not run"}
