"""ANOVA-TPNN: tensor-product neural networks for the functional ANOVA model (Park, Kong,
Choi, Park, Kim; ICML 2025).

- `basis.py`: the sum-to-zero tensor-product basis units (eq. 5–6), data-aware init.
- `model.py`: ANOVA-T^dPNN (eq. 7): main effects + interactions up to a chosen order,
  components evaluable one by one, constants explicit (minibatch in training, frozen on
  the training sample for evaluation).
- `baselines.py`: NA²M, NB²M, MLP (Linen, same interface), the optional interpretML EBM.
- `data.py`: synthetic sets with exactly known ANOVA components, sklearn sets, the
  quantile transform, input checks, resample weights.
- `stability.py`: the across-replica stability score, post-hoc centring, recovery error.
- `report.py`: targets, tables, component plots; `config_schema.py`: config checks.
"""
