"""Standalone helpers that any layer may use; each imports third-party packages only, never
another module of lib/ (so not the harness, lib/common, either).

    plotting         PNG figures: curves, theory-over-simulation points, field grids
    stats            exact statistics: sign test, Wilson interval
    sample_metrics   Fréchet distance, k-NN precision / recall of generated samples
    jsonl            the reader of JSON and JSON-lines files whose errors name path:line
    replicas         R replicas of one model trained in one vmapped step
"""
