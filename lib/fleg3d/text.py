"""Class prompts embedded once by the workspace's MiniLM (the text tower's stand-in), cached.

    emb = prompt_embeddings(["chair", "table"], "a point cloud of a {}.", cache_path)

The prompt of class c is `template.format(name)` (underscores read as spaces; names are
checked against the procedural classes unless `procedural=False`, as for real data sets,
whose names are checked against their files). Embeddings
are unit vectors (C, 384) from `lib.lm.minilm.TextEncoder.from_package()`. They are
written to `cache_path` (.npz holding the prompts and the embeddings) and read back on a
later call whose prompts match exactly, so MiniLM runs once per workdir; a cache of other
prompts is recomputed, never silently reused.
"""
from __future__ import annotations

import os

import numpy as np

from lib.fleg3d import shapes


def prompts(class_names, template: str, procedural: bool = True) -> list[str]:
    if "{}" not in template:
        raise ValueError(f"prompt template {template!r} has no '{{}}' for the class name")
    for name in class_names if procedural else ():
        shapes.check_class(name)
    return [template.format(name.replace("_", " ")) for name in class_names]


def encode(texts: list[str]) -> np.ndarray:
    from lib.lm.minilm import TextEncoder
    return TextEncoder.from_package().encode(texts).astype(np.float32)


def prompt_embeddings(class_names, template: str, cache_path: str | None = None,
                      procedural: bool = True) -> np.ndarray:
    """(C, 384) float32 unit prompt embeddings, through the cache when given."""
    texts = prompts(class_names, template, procedural)
    if cache_path and os.path.exists(cache_path):
        with np.load(cache_path) as f:
            if list(f["prompts"]) == texts:
                return f["embeddings"].astype(np.float32)
    emb = encode(texts)
    if cache_path:
        os.makedirs(os.path.dirname(os.path.abspath(cache_path)), exist_ok=True)
        tmp = cache_path + ".tmp.npz"
        np.savez(tmp, prompts=np.array(texts), embeddings=emb)
        os.replace(tmp, cache_path)
    return emb
