"""Deep Sturm–Liouville (Vigouroux, Dalmau, Béthune, Boutin; ICML 2025).

- `field_lines.py`: field lines of a vector field through a point, diffrax with exit events.
- `sturm_liouville.py`: finite-element SL problem -> generalised symmetric eigenproblem, first
  K eigenpairs, implicit-function-theorem gradients (custom VJP).
- `field.py`: the networks a (field), p, q, w (coefficients), v (entry slopes).
- `model.py`: the DSL approximator and the matched-size MLP baseline.
- `data.py`: tabular / image sets scaled into the domain, low-data subsamples.
- `training.py`: models, replica plans, the lib.common.train_loop Task.
- `runs.py`: the 2-D two-moons demo's run; `toy.py`: its plots; `report.py`: tables,
  targets, plots.
- `config_schema.py`: what configs/dsl/dsl.py may hold.
"""
