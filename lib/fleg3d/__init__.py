"""3D-FLEG (Li et al., ICML 2025): few-shot class-incremental point-cloud classification with
geometric features embedded into the text prompts. Our offline re-implementation:

  shapes.py      procedural point-cloud classes (primitives and composites)
  domain.py      the synthetic -> "real" shift and reproducible data splits
  geometry.py    hand-made local/global geometric descriptors (extraction module, fixed part)
  model.py       PointNet, geometric encoder and embedding projector (Flax), ablation variants
  scoring.py     prompt augmentation, scores, calibration, the alignment loss (equations)
  text.py        class prompts through the workspace MiniLM, cached
  protocol.py    sessions, what a method may see, per-session metrics
  methods.py     3D-FLEG / FILP-3D-like / NCM / text zero-shot / fine-tuning learners
  sources.py     ModelNet40 (.h5 / .off) and ScanObjectNN (.h5) directories as data sources
  bank.py        the clouds of the run's protocols (procedural or from files), descriptors
  report.py      results tables and target checks
See experiments/fleg3d/README.md.
"""
