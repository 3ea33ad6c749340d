"""Spurious correlations in high-dimensional ridge regression (Bombari & Mondelli, ICML 2025).

- `theory.py`: the fixed point for the effective regularisation τ(λ), the Schur
  complement, the deterministic equivalents C^Σ(λ) and L^Σ(λ), the trade-off check.
- `estimates.py`: the ridge path, exact C and L of a fitted linear model, held-out
  estimators Ĉ (permuted core) and L̂ for any predictor.
- `random_features.py`: RF features, Hermite coefficients, exact C of an RF fit, the
  equivalent linear ridge penalty λ̃.
- `data.py`: Gaussian core/spurious designs (`SETTINGS`), coloured 8×8 digits.
- `simulate.py`: Monte Carlo over training sets; `report.py`: the results tables;
  `config_schema.py`: the config checks.

float64 numpy/scipy throughout (the reasons are in theory.py's docstring).
"""
