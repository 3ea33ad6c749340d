"""ANOVA-TPNN against NA²M, NB²M, an MLP (and optionally EBM): accuracy, stability, recovery.

    python experiments/anova_tpnn/main.py --config=configs/anova_tpnn/anova_tpnn.py:quick \
        --workdir=workdirs/anova_tpnn_quick [--config.ebm.enabled=True]

Variants:
  tiny    two small data sets (synthetic regression, diabetes), 3 replicas, K = 4, 60 steps
          (tests; seconds).
  quick   all five data sets (synthetic regression/classification with known components,
          diabetes, the 10 mean features of breast cancer, a 14-feature Madelon-style
          set with 7 pure-noise features), 10 replicas per model trained at once (vmap),
          once over seeds and once over 80% resamples, K = 10, 700 Adam steps of batch
          128, each replica's parameters selected at its best validation loss (checked
          every 25 steps), EBM (5 seeds) on. The README's numbers.
  official  the official code's protocol on quick's data and models: the budget in
          epochs (OFFICIAL_EPOCHS passes of batch 512, capped at the training rows, so every
          set trains to the same number of passes), selection every 4 epochs, each replica
          its own minibatch order, 5 replicas per mode; stability and recovery judged on
          purified components (issue 34 §4).
  paper   the official code's scale for accelerators (not run here): K = 10, 10 replicas,
          20,000 steps of batch 2048 (capped at each training set), all 30 WDBC features,
          larger baselines, a 100-feature Madelon-style set with 2,600 rows.
Splits: 20% test, then 12.5% of the rest for validation (≈ 70/10/20, the official code's).
The EBM comparison (on in quick and paper) needs `pip install interpret-core`; switch it
off with --config.ebm.enabled=False.
"""
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.anova_tpnn.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper", "official")

OFFICIAL_EPOCHS = 100.0
ALL_DATASETS = ("synth_reg", "synth_clf", "diabetes", "breast_cancer", "madelon")


def _build(*, tag, datasets, steps, batch, replicas, num_units, synth_n, breast_features,
           madelon_n, madelon_features, madelon_redundant, nam_hidden, nbm_hidden, nbm_bases,
           mlp_hidden, ebm_enabled, ebm_replicas, val_every, log_every=50,
           checkpoint_every=500, epochs=0.0, val_every_epochs=0.0, batch_order="shared",
           purify_grid=31):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.datasets = tuple(datasets)
    c.models = ("tpnn", "nam", "nbm", "mlp")
    c.batch_size = batch
    c.epochs = epochs
    c.data = dict(test_fraction=0.2, val_fraction=0.125, synth_n=synth_n, synth_noise=0.5,
                  breast_features=breast_features, madelon_n=madelon_n,
                  madelon_features=madelon_features, madelon_informative=5,
                  madelon_redundant=madelon_redundant)
    c.model = dict(max_order=2, num_units=num_units, nam_hidden=tuple(nam_hidden),
                   nbm_hidden=tuple(nbm_hidden), nbm_bases=nbm_bases,
                   mlp_hidden=tuple(mlp_hidden))
    c.optim = dict(tpnn=dict(lr=1e-2), nam=dict(lr=3e-3), nbm=dict(lr=3e-3), mlp=dict(lr=1e-3),
                   b1=0.95, b2=0.998, output_penalty=0.0)
    c.replicas = dict(num=replicas, modes=("seed", "resample"), resample_fraction=0.8,
                      batch_order=batch_order)
    c.ebm = dict(enabled=ebm_enabled, num_replicas=ebm_replicas, interactions=10, outer_bags=8)
    c.eval = dict(plots=True, chunk=512, plot_components=4, val_every=val_every,
                  val_every_epochs=val_every_epochs, purify_grid=purify_grid)
    c.train = train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.mesh = mesh_block()
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="anova_tpnn_tiny", datasets=("synth_reg", "diabetes"), steps=60, batch=64,
            replicas=3, num_units=4, synth_n=300, breast_features=6, madelon_n=200,
            madelon_features=12, madelon_redundant=2,
            nam_hidden=(8,), nbm_hidden=(16,), nbm_bases=8, mlp_hidden=(16,),
            ebm_enabled=False, ebm_replicas=2, val_every=10, log_every=20,
            checkpoint_every=30, purify_grid=0),
        "quick": lambda: _build(
            tag="anova_tpnn_quick", datasets=ALL_DATASETS, steps=700, batch=128,
            replicas=10, num_units=10, synth_n=2000, breast_features=10, madelon_n=1000,
            madelon_features=14, madelon_redundant=2, nam_hidden=(32, 16),
            nbm_hidden=(32, 16), nbm_bases=32, mlp_hidden=(128, 64), ebm_enabled=True,
            ebm_replicas=5, val_every=25),
        "official": lambda: _build(
            tag="anova_tpnn_official", datasets=ALL_DATASETS, steps=1, batch=512,
            replicas=5, num_units=10, synth_n=2000, breast_features=10, madelon_n=1000,
            madelon_features=14, madelon_redundant=2, nam_hidden=(32, 16),
            nbm_hidden=(32, 16), nbm_bases=32, mlp_hidden=(128, 64), ebm_enabled=True,
            ebm_replicas=5, val_every=1, epochs=OFFICIAL_EPOCHS, val_every_epochs=4.0,
            batch_order="per_replica", log_every=20, checkpoint_every=200),
        "paper": lambda: _build(
            tag="anova_tpnn_paper", datasets=ALL_DATASETS, steps=20000, batch=2048,
            replicas=10, num_units=10, synth_n=10000, breast_features=30, madelon_n=2600,
            madelon_features=100, madelon_redundant=15,
            nam_hidden=(64, 64, 32), nbm_hidden=(256, 128, 128), nbm_bases=100,
            mlp_hidden=(256, 256, 128), ebm_enabled=True, ebm_replicas=10, val_every=200,
            log_every=100, checkpoint_every=2000),
    }, arg, default="quick")
