"""CADES's evaluation protocols: AUROC(−p) sweeps over detectability η, and the empirical
FPR over many calibration/test splits.

Every sample is a function of `config.seed` and a tag (`run_key`), so a rerun recomputes
the same numbers. A scorer maps trimmed `Events` to {statistic: (N,)} (`baselines.make_scorer`).
"""
from __future__ import annotations

import zlib

import jax
import jax.numpy as jnp
import numpy as np

from lib.cades import baselines, conformal, report, scenarios as scen_lib
from lib.tpp.events import on_host, trim

METHODS, SINGLE = report.METHODS, report.SINGLE


def run_key(config, *names: str):
    """The PRNG key of the sample named by `names` in a run of `config`."""
    return jax.random.key(config.seed * 2 ** 31 + zlib.crc32(":".join(names).encode()) % 2 ** 31)


def bandwidths(config, scenario: str) -> tuple[float, float]:
    """(h_arr, h_int): the paper's per-scenario values, or the config's fixed ones."""
    if config.bandwidths.mode == "paper":
        return scen_lib.PAPER_BANDWIDTHS[scenario]
    return config.bandwidths.h_arr, config.bandwidths.h_int


class Scorers:
    """One jitted scorer per (model, bandwidths) in a run (shared by the AUROC and FPR parts,
    so each compiles once per sequence length)."""

    def __init__(self, config):
        self.config, self.cache = config, {}

    def get(self, scen_name: str, compensator, model: str):
        h = bandwidths(self.config, scen_name)
        if (model, h) not in self.cache:
            stats = baselines.statistic_fns(SINGLE, *h)
            self.cache[(model, h)] = baselines.make_scorer(compensator, stats, self.config.eval.chunk)
        return self.cache[(model, h)]


def method_p_values(cal: dict, test: dict) -> dict[str, np.ndarray]:
    """Two-sided conformal p-values of every single statistic, and CADES's Bonferroni p."""
    out = {s: np.asarray(conformal.two_sided_p(jnp.asarray(cal[s]), jnp.asarray(test[s])))
           for s in SINGLE}
    out["cades"] = np.asarray(conformal.bonferroni(jnp.stack([out["kl_arr"], out["kl_int"]])))
    return out


def auroc_sweep(config, scen: scen_lib.Scenario, scorer, block, tag: str) -> dict:
    """AUROC(−p) of every method, per seed and η: {"etas", "auroc": {method: (S, E)}}."""
    res = {m: np.zeros((block.num_seeds, len(block.etas))) for m in METHODS}
    for s in range(block.num_seeds):
        k_cal, k_id, k_ood = jax.random.split(run_key(config, tag, scen.name, str(s)), 3)
        cal = scorer(trim(on_host(scen.sample_id(k_cal, block.n_cal))))
        id_p = method_p_values(cal, scorer(trim(on_host(scen.sample_id(k_id, block.n_test)))))
        for e, eta in enumerate(block.etas):
            ood = trim(on_host(scen.sample_ood(jax.random.fold_in(k_ood, e), block.n_test,
                                               float(eta))))
            ood_p = method_p_values(cal, scorer(ood))
            for m in METHODS:
                res[m][s, e] = report.auroc(-id_p[m], -ood_p[m])
    return {"etas": list(block.etas), "auroc": {m: v.tolist() for m, v in res.items()},
            "summary": report.family_summary(res, np.asarray(block.etas))}


def fpr_study(config, setting: str, scen: scen_lib.Scenario, scorer) -> dict:
    """FPR at each α over num_blocks × reps_per_block calibration/test splits."""
    f = config.fpr
    alphas = tuple(f.alphas)
    eps = [conformal.conditional_epsilon(f.n_cal, a, f.delta, strict=False) for a in alphas]
    rows = {m: [] for m in ("cades", "cades_conditional") + SINGLE}
    for b in range(f.num_blocks):
        k_data, k_perm = jax.random.split(run_key(config, "fpr", setting, str(b)))
        sc = scorer(trim(on_host(scen.sample_id(k_data, f.block_size))))
        perms = jax.vmap(lambda k: jax.random.permutation(k, f.block_size))(
            jax.random.split(k_perm, f.reps_per_block))
        both = jnp.asarray(np.stack([sc["kl_arr"], sc["kl_int"]]))
        r = conformal.split_fpr(both, perms, f.n_cal, f.n_test, alphas, [0.0] + eps)
        rows["cades"].append(np.asarray(r[:, 0, :]))
        rows["cades_conditional"].append(np.asarray(r[:, 1 + np.arange(len(alphas)),
                                                      np.arange(len(alphas))]))
        for s in SINGLE:
            one = conformal.split_fpr(jnp.asarray(sc[s])[None], perms, f.n_cal, f.n_test, alphas,
                                      [0.0])
            rows[s].append(np.asarray(one[:, 0, :]))
    out = {"alphas": list(alphas), "epsilon_conditional": eps, "delta": f.delta,
           "repetitions": f.num_blocks * f.reps_per_block, "methods": {}}
    for m, blocks in rows.items():
        per_block = np.stack([blk.mean(0) for blk in blocks])                 # (G, A)
        mean = per_block.mean(0)
        se = per_block.std(0, ddof=1) / np.sqrt(f.num_blocks)
        out["methods"][m] = {"fpr": mean.tolist(), "se": se.tolist(),
                             "within_3se": (mean <= np.asarray(alphas) + 3 * se).tolist()}
    return out
