"""EARTH: epidemic forecasting with an epidemiology-aware neural ODE (Wan et al., ICML 2025).

    python experiments/earth/main.py --config=configs/earth/earth.py:quick --workdir=workdirs/earth_quick
    python tools/results.py --paper=earth --workdir=workdirs/earth_quick \
        --readme=experiments/earth/README.md

Variants:
  tiny    simulated data only (8 regions, 160 weeks), window 8, horizons (2, 4), hidden 8,
          a few steps (tests; seconds).
  quick   simulated metapopulation + the four benchmark files (data/epidemic, relative to
          the repository root; `python tools/fetch_data.py epidemic` fetches and verifies them), window 20, horizons (5, 10, 15),
          hidden 12, midpoint solver, 200 AdamW steps of batch 16 per horizon, the "sirs"
          form of EANO (the form its table was made with); EARTH + 4
          baselines everywhere, the 3 ablations on simulated data; negative counts (the
          Australia-COVID file's reporting corrections) kept as published. About an hour on 2
          CPU cores shared with other jobs, most of it XLA compilation of the diffrax solves.
  official  EARTH vs EpiGNN under EpiGNN's protocol: US-Regions, Japan and
          Australia-COVID; chronological 0.5 / 0.2 / 0.3 split with EpiGNN's int() row
          cuts, window 20, horizons 5 / 10 / 15, min-max per region on the training rows;
          EARTH, EpiGNN (lib/earth/epignn.py, the code's k = 8, hidA = 64, 2 GCN layers)
          and persistence; 3 seeds; every copy keeps its best-validation epoch (scaled
          validation MSE, as EpiGNN selects) and stops after `patience` epochs without
          improvement, at most `max_epochs` (the step budget is in epochs, so
          train.num_steps is not used). Batch 32, AdamW lr 5e-3. EANO's dynamics are
          the released code's (`model.dynamics="official"`, the default); the README's
          first table was made with `--config.model.dynamics=sirs`.
  paper   the released code's scale (hidden 64, 5 seeds, ~400 epochs at batch 128) on an
          accelerator; not run here.
Run only the simulated data with --config.datasets="('simulated',)"; use your own files
with --config.datasets="('custom',)" --config.data.custom_series=... --config.data.custom_adjacency=...
"""
from lib.common.config import variant_config
from lib.earth.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "official", "paper")
OFFICIAL_HIDDEN = 16        # EARTH's hidden size under `official` (the paper: 64; see README)
OFFICIAL_PATIENCE = 20      # evaluations (epochs) without a better validation MSE
OFFICIAL_MAX_EPOCHS = 150


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "earth_tiny", "mesh.data": 1, "datasets": ("simulated",), "data.window": 8,
             "data.horizons": (2, 4), "data.negative_counts": "error", "sim.num_regions": 6,
             "sim.num_weeks": 120, "model.hidden": 8, "model.baseline_hidden": 8,
             "model.heads": 2, "model.solver": "rk4", "optim.lr": 3e-3, "optim.batch_size": 8,
             "train.num_steps": 6, "train.log_every": 3, "train.checkpoint_every": 6}),
        "quick": lambda: config({"tag": "earth_quick", "model.dynamics": "sirs"}),
        "official": lambda: config(
            {"tag": "earth_official", "datasets": ("us_regions", "japan", "australia"),
             "data.val_frac": 0.2, "data.split_rounding": "floor",
             "models": ("earth", "epignn", "persistence"), "ablation_datasets": (),
             "model.hidden": OFFICIAL_HIDDEN, "model.baseline_hidden": OFFICIAL_HIDDEN,
             "select.enabled": True, "select.patience": OFFICIAL_PATIENCE,
             "select.max_epochs": OFFICIAL_MAX_EPOCHS, "optim.batch_size": 32,
             "num_seeds": 3, "train.num_steps": 1}),
        "paper": lambda: config(
            {"tag": "earth_paper",
             "datasets": ("simulated", "us_regions", "us_states", "japan", "australia"),
             "ablation_datasets": ("simulated", "us_regions", "us_states", "japan",
                                   "australia"),
             "sim.num_regions": 49, "sim.num_weeks": 780, "model.hidden": 64,
             "model.baseline_hidden": 64, "model.solver": "rk4", "optim.lr": 1e-3,
             "optim.batch_size": 128, "num_seeds": 5, "train.num_steps": 20000,
             "train.log_every": 100, "train.checkpoint_every": 1000}),
    }, arg, default="quick")
