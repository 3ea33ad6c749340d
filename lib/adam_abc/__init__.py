"""Adam under L-smoothness and the ABC inequality (Jin, Li, Yu & Wang, ICML 2025).

- `adam.py`: Adam in the paper's parameterisation (no bias correction, v_0, ε placement,
  β2 schedules), pure init/update; `sgd.py`: the SGD comparator.
- `schedules.py`: step-size and β2 schedules (finite-horizon and Robbins–Monro).
- `problems.py`: L-smooth objectives with unbounded gradients (quadratic, non-convex,
  least-squares and logistic finite sums); `oracles.py`: stochastic gradients with known
  ABC constants (Gaussian, Student-t, skewed, multiplicative, minibatch).
- `simulate.py`: many runs vmapped and sharded over "data"; `rates.py`: slopes and
  last-iterate summaries; `settings.py`: named settings and methods from a config;
  `config_schema.py`, `report.py` (targets, tables), `plots.py`.
"""
