"""EARTH: epidemic forecasting with an epidemiology-aware neural ODE (Wan et al., ICML 2025).

    python experiments/earth/main.py --config=configs/earth/earth.py:quick --workdir=workdirs/earth_quick
    python tools/earth_results.py --workdir=workdirs/earth_quick --readme=experiments/earth/README.md

Variants:
  tiny    simulated data only (8 regions, 160 weeks), window 8, horizons (2, 4), hidden 8,
          a few steps (tests; seconds).
  quick   simulated metapopulation + the four benchmark files (data/epidemic, relative to
          the repository root; `python tools/fetch_data.py epidemic` fetches and verifies them), window 20, horizons (5, 10, 15),
          hidden 12, midpoint solver, 200 AdamW steps of batch 16 per horizon; EARTH + 4
          baselines everywhere, the 3 ablations on simulated data; negative counts (the
          Australia-COVID file's reporting corrections) kept as published. About an hour on 2
          CPU cores shared with other jobs, most of it XLA compilation of the diffrax solves.
  paper   the released code's scale (hidden 64, 5 seeds, ~400 epochs at batch 128) on an
          accelerator; not run here.
Run only the simulated data with --config.datasets="('simulated',)"; use your own files
with --config.datasets="('custom',)" --config.data.custom_series=... --config.data.custom_adjacency=...
"""
import ml_collections

from lib.common import config as config_lib
from lib.earth.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")
ALL_MODELS = ("earth", "no_eano", "no_gltg", "no_xattn", "persistence", "linear_ar", "gru", "gcn_gru")


def _build(*, tag, datasets, window, horizons, regions, weeks, hidden, heads, steps, batch,
           seeds, lr, solver="rk4", negative_counts="error", ablation_datasets=None,
           models=ALL_MODELS, log_every=50, checkpoint_every=200):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.datasets = tuple(datasets)
    c.data = dict(root="data/epidemic", custom_series=None, custom_adjacency=None,
                  negative_counts=negative_counts, window=window, horizons=tuple(horizons),
                  train_frac=0.5, val_frac=0.3,
                  semantic_k=5, semantic_select="most")
    c.sim = dict(num_regions=regions, num_weeks=weeks, mobility=0.1, seasonal_amp=0.35,
                 report_rate=0.02, dispersion=20.0, seed=0)
    c.models = tuple(models)
    c.ablation_datasets = tuple(datasets if ablation_datasets is None else ablation_datasets)
    c.model = dict(hidden=hidden, heads=heads, ar_lags=4, alpha=3.0, solver=solver,
                   adjoint="recursive_checkpoint", dt=1.0, baseline_hidden=hidden)
    c.optim = dict(lr=lr, weight_decay=5e-4, clip_norm=1.0, batch_size=batch)
    c.num_seeds = seeds
    c.eval = dict(chunk=64, plots=True)
    c.train = config_lib.train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.mesh = config_lib.mesh_block()
    return c


def get_config(arg=None):
    return config_lib.variant_config({
        "tiny": lambda: _build(tag="earth_tiny", datasets=("simulated",), window=8, horizons=(2, 4),
                               regions=6, weeks=120, hidden=8, heads=2, steps=6, batch=8, seeds=1,
                               lr=3e-3, log_every=3, checkpoint_every=6),
        "quick": lambda: _build(tag="earth_quick",
                                datasets=("simulated", "australia", "us_regions", "us_states", "japan"),
                                window=20, horizons=(5, 10, 15), regions=10, weeks=520, hidden=12,
                                heads=4, steps=200, batch=16, seeds=1, lr=5e-3, solver="midpoint",
                                ablation_datasets=("simulated",), negative_counts="keep"),
        "paper": lambda: _build(tag="earth_paper",
                                datasets=("simulated", "us_regions", "us_states", "japan", "australia"),
                                window=20, horizons=(5, 10, 15), regions=49, weeks=780, hidden=64,
                                heads=4, steps=20000, batch=128, seeds=5, lr=1e-3,
                                negative_counts="keep",
                                log_every=100, checkpoint_every=1000),
    }, arg, default="quick")
