"""The series of a dataset name (simulated, benchmark file, custom files) and the forecaster
of a model name with the dataset's graphs baked in."""
from __future__ import annotations

import os

import numpy as np

from lib.common import paths
from lib.earth import baselines, data as data_lib, epignn, gltg, model as model_lib, simulator
from lib.earth.config_schema import BENCHMARKS


def load_dataset(name: str, config) -> tuple[np.ndarray, np.ndarray]:
    """(series [T, N], adjacency [N, N]) of a dataset name (simulated, benchmark, custom)."""
    if name == "simulated":
        s = config.sim
        out = simulator.simulate(simulator.SimConfig(
            num_regions=s.num_regions, num_weeks=s.num_weeks, mobility=s.mobility,
            seasonal_amp=s.seasonal_amp, report_rate=s.report_rate, dispersion=s.dispersion,
            seed=s.seed))
        return out["counts"], out["adjacency"]
    if name == "custom":
        return data_lib.load_files(config.data.custom_series, config.data.custom_adjacency,
                                   config.data.negative_counts)
    series, adj = BENCHMARKS[name]
    root = paths.resolve(config.data.root)
    return data_lib.load_files(os.path.join(root, series), os.path.join(root, adj),
                               config.data.negative_counts)


def build_model(name: str, config, prep: data_lib.Prepared):
    """The forecaster `name` with the dataset's graphs baked in."""
    geo = gltg.geo_graph(prep.adjacency)
    m = config.model
    if name in model_lib.VARIANTS:
        sem = gltg.fused_graph(prep.adjacency, gltg.semantic_graph(
            prep.scaled[:prep.train_end], config.data.semantic_k, config.data.semantic_select))
        return model_lib.Earth(geo, sem, hidden=m.hidden, heads=m.heads, ar_lags=m.ar_lags,
                               variant=name, dynamics=m.dynamics, solver=m.solver,
                               adjoint=m.adjoint, dt=m.dt, alpha=m.alpha)
    if name == "epignn":   # the raw adjacency file, as EpiGNN's loader passes it
        return epignn.EpiGNN(prep.adjacency, k=m.get("epignn_k", 8), hid_a=m.get("epignn_hid_a", 64),
                             layers=m.get("epignn_layers", 2))
    return baselines.Baseline(name, geo, hidden=m.baseline_hidden)
