"""Our DML against the DoubleML package on the same folds and linear learners (optional)."""
import importlib.util
import os

import pytest

pytest.importorskip("doubleml")
pytest.importorskip("sklearn")

_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "latent_ate_vs_doubleml.py")


def _tool():
    spec = importlib.util.spec_from_file_location("latent_ate_vs_doubleml", _TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_estimates_and_standard_errors_agree_with_doubleml_to_1e6():
    rows = _tool().compare(n=300, p=4, n_reps=(1, 3), n_folds=2, seed=1)
    assert {r["case"] for r in rows} == {"plr_po_ols", "plr_po_logistic", "plr_iv_ols",
                                         "irm_logistic"}
    for r in rows:
        assert r["rel_theta"] < 1e-6, r
        assert r["rel_se"] < 1e-6, r
