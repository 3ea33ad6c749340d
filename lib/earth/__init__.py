"""EARTH: Epidemiology-Aware neural ODE with continuous disease-TRansmission grapH (ICML 2025).

Modules: `simulator` (metapopulation SIRS with mobility, seasonal forcing, reporting noise),
`data` (benchmark text-file loader, validation, splits, windows), `eano` (the epidemic
neural ODE in diffrax), `gltg` (global learned transmission graph, DTW semantic graph),
`fusion` (cross-attention), `model` (EARTH and its ablations), `baselines`, `metrics`.
"""
