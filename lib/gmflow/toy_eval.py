"""The 2-D toy protocol: which models to train, and each model sampled by every solver at every NFE.

    toy_models(config, dataset)  -> [(name, K, loss kind)]      ("fm" K = 1 L2, "gm<K>")
    toy_model(config.toy, K)     -> the GMFlowMLP of one of them
    reference(config, dataset, d_index) -> (ref, stats)         data vs fresh data
    evaluate_model(config, model, params, kind, ref) -> (solvers, scatter rows, SWD curves)
    plot(workdir, config, dataset, ...)                          scatter grid, SWD vs NFE

Samples are scored by sliced W₂ and MMD² to the reference set and, on the checkerboard, by
the fraction inside the white squares; non-finite samples are counted and dropped.
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from lib.toolbox import plotting
from lib.common import workdir as wd
from lib.gmflow import denoising, metrics, mixture, plots, samplers, toys
from lib.gmflow.networks import GMFlowMLP


def toy_models(config, dataset: str) -> list[tuple[str, int, str]]:
    comps = config.toy.components if dataset == "checkerboard" else config.toy.grid_components
    out = [("fm", 1, "l2")] if config.toy.fm_baseline else []
    return out + [(f"gm{k}", k, config.toy.loss) for k in comps]


def toy_model(tc, k: int) -> GMFlowMLP:
    """The denoiser of 2-D points with `k` components (`config.toy` = tc)."""
    return GMFlowMLP(groups=1, channels=2, num_components=k, width=tc.width, depth=tc.depth,
                     coord_embed_dim=tc.coord_embed_dim)


def sampler(model: GMFlowMLP, kind: str, solver: str):
    """A jitted (params, x1, key, nfe[, substeps]) -> samples for one model and solver."""
    def gm_u(params, x, t):
        return model.apply(params, x, jnp.full((x.shape[0],), t, x.dtype))

    if kind == "l2":
        def velocity_sampler(params, x1, key, nfe):
            vel = lambda x, t: mixture.mean(gm_u(params, x, t))
            return samplers.fm_sample(vel, x1, key, nfe=nfe, solver=solver)
        return jax.jit(velocity_sampler, static_argnums=3)

    def gm_sampler(params, x1, key, nfe, substeps):
        den = lambda x, t: denoising.u_to_x0(gm_u(params, x, t), x, t)
        return samplers.gm_sample(den, x1, key, nfe=nfe, solver=solver, substeps=substeps)
    return jax.jit(gm_sampler)


def reference(config, dataset: str, d_index: int) -> tuple[np.ndarray, dict]:
    """Data samples (num_samples, 2) and the data-vs-fresh-data SWD, MMD², in-square fraction."""
    tc = config.toy
    ref = toys.sample_toy(dataset, np.random.default_rng([config.seed, 99, d_index]),
                          tc.num_samples)
    ref2 = toys.sample_toy(dataset, np.random.default_rng([config.seed, 98, d_index]),
                           tc.num_samples)
    return ref, {"swd": metrics.sliced_wasserstein(ref, ref2, tc.swd_projections),
                 "mmd": metrics.mmd_rbf(ref[:tc.mmd_samples], ref2[:tc.mmd_samples]),
                 "in_square": float(toys.in_white_square(ref2).mean())}


def _scores(x: np.ndarray, ref: np.ndarray, tc, solver: str, nfe: int) -> dict:
    finite = np.all(np.isfinite(x), axis=1)
    xf = x[finite]
    return {"swd": metrics.sliced_wasserstein(xf, ref, tc.swd_projections),
            "mmd": metrics.mmd_rbf(xf[:tc.mmd_samples], ref[:tc.mmd_samples]),
            "in_square": float(toys.in_white_square(x).mean()),
            "nonfinite": int((~finite).sum()),
            "nfe_used": samplers.heun_nfe(nfe) if solver == "heun" else nfe}


def evaluate_model(config, model: GMFlowMLP, params, kind: str, name: str,
                   ref: np.ndarray) -> tuple[dict, dict, dict]:
    """Every solver of the model's family at every NFE in `toy.nfes`: ({solver: {"nfe",
    "sample_s"}}, {"<name> <solver>": rows of plotted samples}, {label: (NFEs, SWDs)})."""
    tc = config.toy
    solvers, scatter_rows, swd_curves = {}, {}, {}
    x1 = jax.random.normal(jax.random.key(config.seed + 7), (tc.num_samples, 1, 2))
    for solver in (tc.fm_solvers if kind == "l2" else tc.gm_solvers):
        run = sampler(model, kind, solver)
        rows, per_nfe = [], {}
        t0 = time.time()
        for nfe in tc.nfes:
            key = jax.random.key(config.seed + 1000 + nfe)
            if kind == "l2":
                if solver == "heun" and nfe < 2:
                    per_nfe[str(nfe)] = None       # Heun needs two evaluations
                    rows.append(None)
                    continue
                x = run(params, x1, key, nfe)
            else:
                x = run(params, x1, key, nfe, samplers.default_substeps(nfe, tc.substep_budget))
            x = np.asarray(x[:, 0], np.float64)
            per_nfe[str(nfe)] = _scores(x, ref, tc, solver, nfe)
            rows.append(x[:tc.plot_samples])
        solvers[solver] = {"nfe": per_nfe, "sample_s": time.time() - t0}
        scatter_rows[f"{name} {solver}"] = rows
        pts = [(n, v["swd"]) for n, v in ((int(a), b) for a, b in per_nfe.items()) if v]
        swd_curves[f"{name} {solver}"] = ([p[0] for p in pts], [p[1] for p in pts])
    return solvers, scatter_rows, swd_curves


def plot(workdir: str, config, dataset: str, ref: np.ndarray, ref_swd: float,
         scatter_rows: dict, swd_curves: dict) -> None:
    """plots/<dataset>_samples.png (data row last) and plots/<dataset>_swd.png."""
    tc = config.toy
    lim = {"checkerboard": toys.CHECKER_SCALE + 0.5, "moons": 3.5}.get(dataset, 3.0)
    scatter_rows["data"] = [ref[:tc.plot_samples]] + [None] * (len(tc.nfes) - 1)
    plots.scatter_grid(os.path.join(workdir, wd.PLOTS, f"{dataset}_samples.png"),
                       scatter_rows, [f"NFE {n}" for n in tc.nfes], lim=lim, title=dataset)
    plotting.line_plot(os.path.join(workdir, wd.PLOTS, f"{dataset}_swd.png"), swd_curves,
                       xlabel="NFE", ylabel="sliced W2 to data", title=dataset, logy=True,
                       hline=ref_swd)
