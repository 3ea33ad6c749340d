"""Adjustment for confounding using pre-trained representations (Schulte et al., ICML 2025).

- `dml.py`: double machine learning — PLR (partialling-out, IV-type) and IRM (AIPW) scores,
  K-fold cross-fitting with repeated splits and median aggregation, se / CI, clipping;
  `fit(y, d, features, learners)`.
- `learners.py`: ridge/OLS (GCV), logistic, lasso, Flax MLP (optax, early stopping), and
  scikit-learn wrappers behind one vmappable interface.
- `baselines.py`: naive, oracle, S-learners.
- `runs.py`: CNN and autoencoders (`networks.py`) pre-trained on a split disjoint from
  the causal pool (their tasks in `training.py`; lib/common/train_loop, Orbax checkpoints),
  feature extraction and cache; `features.py`: the split and the feature arrays.
- `semisynthetic.py`: label and complex confounding designs with a known ATE.
- `estimators.py`: the experiment's estimators batched over replications.
- `intrinsic_dim.py`: TwoNN and Levina–Bickel MLE.
- `report.py`: Monte Carlo summaries, targets, tables, figures; `config_schema.py`: checks.
"""
