"""ATE estimation with latent features of pre-trained networks (DML on image confounders).

    python experiments/latent_ate/main.py --config=configs/latent_ate/latent_ate.py:quick \
        --workdir=workdirs/latent_ate_quick

Variants:
  tiny    8×8 digits (half pre-training, half causal pool), networks trained for tens of
          steps, n = 300, 8 replications, four linear estimators (tests; seconds; the
          neural nuisances are tested on their own in tests/latent_ate).
  quick   Fashion-MNIST: CNN / autoencoders pre-trained on 20k images of the training part,
          causal samples of n = 1000 from the 10k test part, 200 replications per setting,
          every estimator but the raw-pixel MLP. The README's numbers (minutes on 2 cores).
  official  quick's pre-training and complex design with the official code's nuisances
          (OFFICIAL_MLP below: MLP (100, 50), λ = 1e-6, minibatches of 200, 500 epochs, no
          early stopping; logistic propensity; OLS + logistic linear row), the current
          linear rows beside them. Reuse quick's pre-training by pointing --workdir at a
          directory holding its pretrain/ and features/.
  paper   Fashion-MNIST at the paper's scale: pre-training on all 60k, n = 4000 (the
          paper's complex-setting size), 500 replications, the paper's (100, 50) MLP, the
          raw-pixel MLP added (an accelerator; not run here).
Pick settings with --config.sim.settings="('label',)" and estimators with
--config.estimators="('naive','dml_mlp_latent')".
"""
import ml_collections
import numpy as np

from lib.common.config import mesh_block, variant_config
from lib.latent_ate.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "official", "paper")

ALL = ("naive", "oracle", "s_linear_latent", "s_mlp_latent", "dml_linear_pixels",
       "dml_linear_latent", "dml_lasso_latent", "dml_mlp_latent", "dml_iv_mlp_latent",
       "irm_mlp_latent", "dml_mlp_ae")
# quick drops the two most expensive neural estimators (IRM and the MLP S-learner) to fit
# 2 × 200 replications into ~30 minutes of 2 shared cores; they run with --config.estimators.
QUICK = ("naive", "oracle", "s_linear_latent", "dml_linear_pixels", "dml_linear_latent",
         "dml_mlp_latent", "dml_iv_mlp_latent", "dml_mlp_ae")


# MLP nuisance penalty (learners.mlp). Default: "fixed" at λ = L2_DEFAULT = 1e-6 (the
# official code's scikit-learn alpha = 1e-4 on batches of 200, i.e. practically no
# shrinkage) with early stopping on 20 % of the training fold. The former default "cv"
# (λ from L2_GRID and the stopping checkpoint by CV_FOLDS-fold cross-validation inside each
# training fold, --config.mlp.penalty=cv) shrinks the nuisances and biases the
# partialling-out estimate towards the confounded one (tools/latent_ate_nuisance_study.py;
# NOTES.md). "scaled" uses λ = l2_scale / n_fit; the older tables' "fixed" values λ = 0.3 /
# 0.03 were tuned against the TRUE nuisances (reproduce them with --config.mlp.penalty=fixed
# --config.mlp.l2_outcome=0.3 --config.mlp.l2_propensity=0.03).
L2_GRID = (1e-2, 3e-2, 1e-1, 3e-1, 1.0)
CV_FOLDS = 2
L2_DEFAULT = 1e-6


def _mlp(hidden, lr, steps, eval_every, penalty="fixed", batch_size=0, epochs=0,
         early_stopping=True, l2_outcome=L2_DEFAULT, l2_propensity=L2_DEFAULT):
    return dict(hidden=hidden, lr=lr, steps=steps, val_fraction=0.2, eval_every=eval_every,
                penalty=penalty, l2_grid=L2_GRID, cv_folds=CV_FOLDS, l2_scale=1.0,
                l2_outcome=l2_outcome, l2_propensity=l2_propensity, batch_size=batch_size,
                epochs=epochs, early_stopping=early_stopping)


# The official code's complex-design nuisances (rickmer-schulte/Pretrained-Causal-Adjust,
# experiments/*/complex): outcome Pipeline(StandardScaler, MLPRegressor((100, 50), relu,
# adam, max_iter=500)) with scikit-learn's defaults alpha = 1e-4, batch_size = min(200, n),
# learning_rate_init = 1e-3, early_stopping = False; propensity LogisticRegression() (its
# default C = 1, i.e. logistic_l2 = 1 on the summed log-loss); linear row LinearRegression
# (OLS) + LogisticRegression(); DoubleMLPLR partialling-out, n_folds = 2. alpha = 1e-4 on
# batches of 200 is λ = 2·alpha/200 = 1e-6 in learners.mlp's convention (see its docstring).
OFFICIAL_MLP = _mlp((100, 50), 1e-3, 1, 1, penalty="fixed", batch_size=200, epochs=500,
                    early_stopping=False, l2_outcome=1e-6, l2_propensity=1e-6)
OFFICIAL = ("naive", "oracle", "s_linear_latent", "dml_ols_latent", "dml_linear_latent",
            "dml_mlp_logit_latent")


def _net(steps, batch, lr, latent_dim, **kw):
    return dict(steps=steps, batch=batch, lr=lr, latent_dim=latent_dim, **kw)


def _build(*, tag, dataset, pretrain_size, cnn, pixel_ae, confounder_ae, n, reps, mlp,
           estimators=ALL, id_points=2000, rep_batch=25, label_classes=(5, 7, 9),
           pixel_pool=1, target_estimators=("dml_mlp_latent", "dml_iv_mlp_latent")):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.data = dict(name=dataset, path="/usr/share/datasets/fashion-mnist",
                  pretrain_size=pretrain_size, pool_fraction=0.5,
                  label_classes=tuple(label_classes), pixel_pool=pixel_pool)
    c.pretrain = dict(cnn=cnn, pixel_ae=pixel_ae, confounder_ae=confounder_ae)
    c.sim = dict(settings=("label", "complex"), n=n, reps=reps, theta=2.0, noise=1.0,
                 gamma=-2.0, p1=0.7, p0=0.3, logit_scale=1.0, outcome_scale=1.0, coef_seed=1)
    c.dml = dict(n_folds=2, n_rep=1, clip=0.01, aggregation="median_ci", level=0.95,
                 ridge_lambdas=tuple(float(v) for v in np.logspace(-2, 4, 13)),
                 logistic_l2=1.0, lasso_alpha=0.01)
    c.mlp = mlp
    c.estimators = tuple(estimators)
    c.id = dict(points=id_points, k=10)
    c.eval = dict(rep_batch=rep_batch, plots=True, plot_reps=40, target_coverage=(91, 99),
                  target_bias_fraction=0.1,
                  target_estimators=tuple(target_estimators))
    c.mesh = mesh_block()
    return c


def _official(c):
    """The complex design only (the official MLP pairing is the complex notebooks')."""
    c.sim.settings = ("complex",)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="latent_ate_tiny", dataset="digits", pretrain_size=100,
            cnn=_net(40, 64, 3e-3, 32, channels=(8, 16)),
            pixel_ae=_net(40, 64, 3e-3, 4, hidden=(32,)),
            confounder_ae=_net(40, 64, 3e-3, 3, hidden=(16,)),
            n=300, reps=8, id_points=300, rep_batch=8, label_classes=(0, 1, 2, 3, 4),
            estimators=("naive", "oracle", "s_linear_latent", "dml_linear_latent"),
            target_estimators=("dml_linear_latent",),
            mlp=_mlp((16,), 3e-3, 20, 10)),
        "quick": lambda: _build(
            tag="latent_ate_quick", dataset="fashion_mnist", pretrain_size=20000,
            cnn=_net(1500, 128, 1e-3, 64, channels=(16, 32)),
            pixel_ae=_net(1500, 128, 1e-3, 8, hidden=(256,)),
            confounder_ae=_net(1500, 128, 1e-3, 5, hidden=(32,)),
            n=1000, reps=200, estimators=QUICK, pixel_pool=2,
            mlp=_mlp((32,), 3e-3, 200, 10)),
        "official": lambda: _official(_build(
            tag="latent_ate_official", dataset="fashion_mnist", pretrain_size=20000,
            cnn=_net(1500, 128, 1e-3, 64, channels=(16, 32)),
            pixel_ae=_net(1500, 128, 1e-3, 8, hidden=(256,)),
            confounder_ae=_net(1500, 128, 1e-3, 5, hidden=(32,)),
            n=1000, reps=200, estimators=OFFICIAL, pixel_pool=2, mlp=OFFICIAL_MLP,
            target_estimators=("dml_mlp_logit_latent",))),
        "paper": lambda: _build(
            tag="latent_ate_paper", dataset="fashion_mnist", pretrain_size=60000,
            cnn=_net(20000, 256, 1e-3, 128, channels=(32, 64)),
            pixel_ae=_net(20000, 256, 1e-3, 16, hidden=(512, 128)),
            confounder_ae=_net(20000, 256, 1e-3, 5, hidden=(128, 64)),
            n=4000, reps=500, estimators=ALL + ("dml_mlp_pixels",), id_points=5000,
            rep_batch=50,
            mlp=_mlp((100, 50), 1e-3, 1000, 10)),
    }, arg, default="quick")
