"""SketchDNN: Gaussian-Softmax diffusion for CAD sketches (Chereddy & Femiani, ICML 2025), in JAX.

    sketch        primitive slots (line / circle / arc / point / none, construction flag),
                  domain checks, 16 × 21 slot codec, isosceles arcs, text format, PNG grids
    generator     procedural CAD-like sketches (closed profiles, fillets, holes, symmetry)
    sketchgraphs  loader for SketchGraphs sequence files (filters, normalisation, dedup)
    diffusion     schedules, Gaussian-Softmax forward process, posteriors, ancestral sampling
    baselines     one-hot Gaussian and D3PM-style label diffusion
    denoiser      permutation-equivariant adaLN slot transformer (± positional encoding)
    loss          training loss (CE + masked MSE, low-t weight) and the NLL bound in bits
    metrics       rasteriser, metric encoder, Fréchet distance, precision/recall, validity
    training      train_loop Tasks; report (targets, tables); config_schema
"""
