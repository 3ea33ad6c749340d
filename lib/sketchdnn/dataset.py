"""The sketch data of a SketchDNN run: procedural sketches or a SketchGraphs file, split.

    load_data(config) -> {'train', 'test': (N, S, 21) float32, 'train_labels', 'test_labels',
                          'num_classes', 'info'}
Encoder labels are the generator family, or the primitive count for SketchGraphs.
"""
from __future__ import annotations

import os

import numpy as np

from lib.common import config as config_lib
from lib.sketchdnn import generator, sketchgraphs
from lib.sketchdnn import sketch as sk


def load_data(config) -> dict:
    """{'train', 'test': (N, S, 21) float32, 'train_labels', 'test_labels', 'num_classes',
    'info'}; encoder labels are families (generator) or primitive counts (SketchGraphs)."""
    d = config.data
    if d.source == "generator":
        n = d.num_train + d.num_test
        x, fam = generator.generate([config.seed, 1], n, d.num_slots,
                                    min_primitives=d.min_primitives,
                                    max_primitives=d.max_primitives, families=d.families)
        labels, ncls, info = fam, len(d.families), {"source": "generator"}
    else:
        if not os.path.exists(d.sketchgraphs_path):
            raise config_lib.ConfigError(f"config key 'data.sketchgraphs_path' = "
                                         f"{d.sketchgraphs_path!r}: no such file")
        x, info = sketchgraphs.load(d.sketchgraphs_path, d.num_slots,
                                    min_primitives=d.min_primitives,
                                    max_primitives=d.max_primitives)
        x = x[np.random.default_rng(4).permutation(len(x))]
        n = min(len(x), d.num_train + d.num_test)
        x = x[:n]
        labels = np.sum(np.argmax(x[..., sk.TYPE_SLICE], -1) != sk.NONE, 1).astype(np.int32)
        ncls = d.num_slots + 1
        info = {"source": "sketchgraphs", **info}
    n_test = min(d.num_test, len(x) // 2)
    return {"train": x[n_test:], "test": x[:n_test], "train_labels": labels[n_test:],
            "test_labels": labels[:n_test], "num_classes": ncls, "info": info}
