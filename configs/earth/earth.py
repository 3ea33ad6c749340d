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
  official  EARTH vs EpiGNN under EpiGNN's protocol (issue 34): US-Regions, Japan and
          Australia-COVID; chronological 0.5 / 0.2 / 0.3 split with EpiGNN's int() row
          cuts, window 20, horizons 5 / 10 / 15, min-max per region on the training rows;
          EARTH, EpiGNN (lib/earth/epignn.py, the code's k = 8, hidA = 64, 2 GCN layers)
          and persistence; 3 seeds; every copy keeps its best-validation epoch (scaled
          validation MSE, as EpiGNN selects) and stops after `patience` epochs without
          improvement, at most `max_epochs` (the step budget is in epochs, so
          train.num_steps is not used). Batch 32, AdamW lr 5e-3.
  paper   the released code's scale (hidden 64, 5 seeds, ~400 epochs at batch 128) on an
          accelerator; not run here.
Run only the simulated data with --config.datasets="('simulated',)"; use your own files
with --config.datasets="('custom',)" --config.data.custom_series=... --config.data.custom_adjacency=...
"""
import ml_collections

from lib.common import config as config_lib
from lib.earth.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "official", "paper")
OFFICIAL_HIDDEN = 16        # EARTH's hidden size under `official` (the paper: 64; see README)
OFFICIAL_PATIENCE = 20      # evaluations (epochs) without a better validation MSE
OFFICIAL_MAX_EPOCHS = 150
ALL_MODELS = ("earth", "no_eano", "no_gltg", "no_xattn", "persistence", "linear_ar", "gru", "gcn_gru")


def _build(*, tag, datasets, window, horizons, regions, weeks, hidden, heads, steps, batch,
           seeds, lr, solver="rk4", negative_counts="error", ablation_datasets=None,
           models=ALL_MODELS, log_every=50, checkpoint_every=200, val_frac=0.3,
           split_rounding="round", select=None, weight_decay=5e-4):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.datasets = tuple(datasets)
    c.data = dict(root="data/epidemic", custom_series=None, custom_adjacency=None,
                  negative_counts=negative_counts, window=window, horizons=tuple(horizons),
                  train_frac=0.5, val_frac=val_frac, split_rounding=split_rounding,
                  semantic_k=5, semantic_select="most")
    c.sim = dict(num_regions=regions, num_weeks=weeks, mobility=0.1, seasonal_amp=0.35,
                 report_rate=0.02, dispersion=20.0, seed=0)
    c.models = tuple(models)
    c.ablation_datasets = tuple(datasets if ablation_datasets is None else ablation_datasets)
    c.model = dict(hidden=hidden, heads=heads, ar_lags=4, alpha=3.0, solver=solver,
                   adjoint="recursive_checkpoint", dt=1.0, baseline_hidden=hidden,
                   epignn_k=8, epignn_hid_a=64, epignn_layers=2)
    c.optim = dict(lr=lr, weight_decay=weight_decay, clip_norm=1.0, batch_size=batch)
    c.run = dict(stage_budget_s=None)   # run-time only: wall-clock cap per trained stage
    c.select = {**dict(enabled=False, every_epochs=1, patience=1, max_epochs=1), **(select or {})}
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
        "official": lambda: _build(tag="earth_official",
                                   datasets=("us_regions", "japan", "australia"),
                                   window=20, horizons=(5, 10, 15), regions=10, weeks=520,
                                   hidden=OFFICIAL_HIDDEN, heads=4, steps=1, batch=32, seeds=3,
                                   lr=5e-3, solver="midpoint", negative_counts="keep",
                                   models=("earth", "epignn", "persistence"), ablation_datasets=(),
                                   val_frac=0.2, split_rounding="floor",
                                   select=dict(enabled=True, every_epochs=1,
                                               patience=OFFICIAL_PATIENCE,
                                               max_epochs=OFFICIAL_MAX_EPOCHS)),
        "paper": lambda: _build(tag="earth_paper",
                                datasets=("simulated", "us_regions", "us_states", "japan", "australia"),
                                window=20, horizons=(5, 10, 15), regions=49, weeks=780, hidden=64,
                                heads=4, steps=20000, batch=128, seeds=5, lr=1e-3,
                                negative_counts="keep",
                                log_every=100, checkpoint_every=1000),
    }, arg, default="quick")
