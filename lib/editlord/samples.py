"""Editor training samples: (pair, spec, manifested rules) per training pair, their
renamed copies, their identifier-abstract form, and the chat conversations per variant."""
from __future__ import annotations

import dataclasses
import logging
from collections import Counter

from lib.editlord import abstraction, editor, learner
from lib.editlord import augment as augment_lib

log = logging.getLogger(__name__)


def augment(backend, rules, train_pairs, *, seed: int, max_rules: int):
    """([(pair, spec, manifested rules)], skipped counts by error type): at most
    `max_rules` rules per sample (`learner.manifest_sample`)."""
    out, skipped = [], Counter()
    for p in train_pairs:
        try:
            spec = backend.spec(p.target)
            ms = learner.manifest_sample(backend, p, rules, seed=seed, max_rules=max_rules)
        except (ValueError, SyntaxError) as e:
            skipped[type(e).__name__] += 1
            log.warning("augmentation skipped %s: %s", p.id, e)
            continue
        out.append((p, spec, ms))
    return out, dict(skipped)


def abstract_samples(backend, aug):
    """aug with every pair in identifier-abstract form (`abstraction.abstract`: one mapping
    for source and target, extended by the target's new names); the spec is recomputed
    from the abstract target (the editor generates it from abstract code, so it cannot
    hold the concrete names), the manifested rules are name-independent and kept.
    Returns (samples, number of pairs where nothing could be renamed)."""
    out, unrenamed = [], 0
    for p, _, ms in aug:
        src, m = abstraction.abstract(p.source)
        tgt, _ = abstraction.abstract(p.target, m)
        unrenamed += not m
        q = dataclasses.replace(p, source=src, target=tgt)
        out.append((q, backend.spec(tgt), ms))
    return out, unrenamed


def add_renamed_copies(backend, aug, copies: int, seed: int):
    """aug [(pair, spec, rules)] followed by `copies` renamed copies of each sample
    (`augment.renamed`: one mapping for source and target; the spec is recomputed from the
    renamed target, the manifested rules are name-independent patterns and kept)."""
    out = list(aug)
    for k in range(copies):
        for i, (p, _, ms) in enumerate(aug):
            q = augment_lib.renamed(p, seed + 1000 * (k + 1) + i)
            if q is not None:
                out.append((q, backend.spec(q.target), ms))
    return out


def conversations(aug, variants, fmt: str) -> dict[str, list]:
    """{variant: [chat conversation per sample]} (`editor.conversation`, format `fmt`)."""
    return {v: [editor.conversation(v, p, spec, ms, fmt) for p, spec, ms in aug]
            for v in variants}
