"""MultiPDENet (ICML 2025): a learnable Physics Block stepped at two time scales.

- `stencils.py`: affine families of 5×5 (and 1-D) derivative stencils, pure numpy.
- `filters.py`: the learnable derivative filters (Linen).
- `physics.py`: PDE right-hand sides and the spectral Poisson block.
- `model.py`: the model, `micro_step` / `macro_step` / `rollout`.
- `metrics.py`: RMSE, MAE, MNAD, correlation per step, HCT.
- `config_schema.py` (keys: default + rule), `training.py`, `evaluation.py`, `runs.py`
  (`setup`, `load_run`), `report.py`, `sweeps.py`: the experiment's pieces.
- `front.py`, `attractor.py`: the cost–accuracy front and the attractor warm-up;
  `classical.py` its classical families, `tuning.py` the tuned FD4 knobs' file (no JAX).
"""
