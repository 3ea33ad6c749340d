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
from lib.common.config import variant_config
from lib.latent_ate.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "official", "paper")

ALL = ("naive", "oracle", "s_linear_latent", "s_mlp_latent", "dml_linear_pixels",
       "dml_linear_latent", "dml_lasso_latent", "dml_mlp_logit_latent", "dml_mlp_latent",
       "dml_iv_mlp_latent", "irm_mlp_latent", "dml_mlp_ae")
# quick drops the two most expensive neural estimators (IRM and the MLP S-learner) to fit
# 2 × 200 replications into ~30 minutes of 2 shared cores; they run with --config.estimators.
# The target estimator (every variant but tiny) is dml_mlp_logit_latent, the official pairing
# of an MLP outcome with a logistic propensity (the treatment is binary); dml_mlp_latent
# (both nuisances MLPs, the paper's description) stays beside it.
QUICK = ("naive", "oracle", "s_linear_latent", "dml_linear_pixels", "dml_linear_latent",
         "dml_mlp_logit_latent", "dml_mlp_latent", "dml_iv_mlp_latent", "dml_mlp_ae")

# The official code's complex-design nuisances (rickmer-schulte/Pretrained-Causal-Adjust,
# experiments/*/complex): outcome Pipeline(StandardScaler, MLPRegressor((100, 50), relu,
# adam, max_iter=500)) with scikit-learn's defaults alpha = 1e-4, batch_size = min(200, n),
# learning_rate_init = 1e-3, early_stopping = False; propensity LogisticRegression() (its
# default C = 1, i.e. logistic_l2 = 1 on the summed log-loss); linear row LinearRegression
# (OLS) + LogisticRegression(); DoubleMLPLR partialling-out, n_folds = 2. alpha = 1e-4 on
# batches of 200 is λ = 2·alpha/200 = 1e-6 in learners.mlp's convention (see its docstring;
# the default mlp.l2_outcome = mlp.l2_propensity, with mlp.penalty = "fixed").
OFFICIAL_MLP = {"mlp.hidden": (100, 50), "mlp.lr": 1e-3, "mlp.steps": 1, "mlp.eval_every": 1,
                "mlp.batch_size": 200, "mlp.epochs": 500, "mlp.early_stopping": False}
OFFICIAL = ("naive", "oracle", "s_linear_latent", "dml_ols_latent", "dml_linear_latent",
            "dml_mlp_logit_latent")


def _nets(steps, batch, lr):
    """The three pre-trained networks' shared steps, batch and lr."""
    return {f"pretrain.{net}.{k}": v for net in ("cnn", "pixel_ae", "confounder_ae")
            for k, v in (("steps", steps), ("batch", batch), ("lr", lr))}


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "latent_ate_tiny", "mesh.data": 1, "data.name": "digits", "data.pretrain_size": 100,
             "data.label_classes": (0, 1, 2, 3, 4), "data.pixel_pool": 1,
             **_nets(40, 64, 3e-3), "pretrain.cnn.latent_dim": 32,
             "pretrain.cnn.channels": (8, 16), "pretrain.pixel_ae.latent_dim": 4,
             "pretrain.pixel_ae.hidden": (32,), "pretrain.confounder_ae.latent_dim": 3,
             "pretrain.confounder_ae.hidden": (16,), "sim.n": 300, "sim.reps": 8,
             "mlp.hidden": (16,), "mlp.steps": 20,
             "estimators": ("naive", "oracle", "s_linear_latent", "dml_linear_latent"),
             "id.points": 300, "eval.rep_batch": 8,
             "eval.target_estimators": ("dml_linear_latent",)}),
        "quick": lambda: config({"tag": "latent_ate_quick", "estimators": QUICK}),
        # the complex design only (the official MLP pairing is the complex notebooks')
        "official": lambda: config(
            {"tag": "latent_ate_official", "sim.settings": ("complex",), **OFFICIAL_MLP,
             "estimators": OFFICIAL}),
        "paper": lambda: config(
            {"tag": "latent_ate_paper", "data.pretrain_size": 60000, "data.pixel_pool": 1,
             **_nets(20000, 256, 1e-3), "pretrain.cnn.latent_dim": 128,
             "pretrain.cnn.channels": (32, 64), "pretrain.pixel_ae.latent_dim": 16,
             "pretrain.pixel_ae.hidden": (512, 128),
             "pretrain.confounder_ae.hidden": (128, 64), "sim.n": 4000, "sim.reps": 500,
             "mlp.hidden": (100, 50), "mlp.lr": 1e-3, "mlp.steps": 1000,
             "estimators": ALL + ("dml_mlp_pixels",), "id.points": 5000,
             "eval.rep_batch": 50}),
    }, arg, default="quick")
