"""What an encoder variant does, as a static (hashable) description.

    dense     every block updates all N tokens.
    topk      Sparse-DETR-like: one selection of the top ρN tokens by the objectness score,
              the same set in every block, dropped tokens keep their backbone features.
    focus     Focus-DETR-like: objectness scores modulated top-down (a token's score plus
              its parent's at the next coarser level), fixed per-level weights, a cascade
              of shrinking keep counts over blocks, no aggregation.
    dynamic   ours (the paper's method as designed here): per-level quotas from the
              importance mass, re-scoring in every block, proximal aggregation at the
              fine levels, holistic at the coarse ones (`holistic="context"`: each coarse
              level's dropped tokens pooled into one context slot within the budget;
              `"kept"`: each dropped token spread over the level's kept tokens by feature
              similarity), centre-distance regulariser.
"""
from __future__ import annotations

import dataclasses

from lib.dynamic_detr import tokens

METHODS = ("dense", "topk", "focus", "dynamic")
HOLISTIC = ("context", "kept")        # holistic aggregation: into a context slot / into kept tokens


@dataclasses.dataclass(frozen=True)
class EncoderSpec:
    method: str = "dense"
    keep: tuple[float, ...] = ()          # keep ratio of N per block (static counts)
    allocation: str = "global"            # see tokens.ALLOCATIONS
    modes: tuple[str, ...] = ()           # aggregation mode per level (tokens.MODES)
    rescore: bool = False                 # re-score tokens with a per-block head
    topdown: bool = False                 # Focus-DETR top-down score modulation
    level_weights: tuple[float, ...] = () # for allocation "fixed"
    temperature: float = 0.1              # holistic soft-assignment temperature
    unmerge: bool = True                  # D5: merged tokens' memory gets their slot's updates

    def counts(self, n: int, num_blocks: int) -> tuple[int, ...]:
        if self.method == "dense":
            return (n,) * num_blocks
        if len(self.keep) != num_blocks:
            raise ValueError(f"spec {self.method}: {len(self.keep)} keep ratios for {num_blocks} blocks")
        out = tuple(max(1, min(n, int(round(r * n)))) for r in self.keep)
        if any(b > a for a, b in zip(out, out[1:])):
            raise ValueError(f"spec {self.method}: keep counts {out} must not grow with depth")
        return out


def make_spec(method: str, budget: float, *, num_blocks: int, num_levels: int,
              cascade: tuple[float, ...], focus_level_weights: tuple[float, ...],
              fine_levels: int, ablation: str = "none", temperature: float = 0.1,
              holistic: str = "context") -> EncoderSpec:
    """The spec of `method` at mean keep ratio `budget`; `cascade` (one factor per block,
    mean 1) shapes the per-block counts of focus/dynamic so that all methods process the
    same mean number of tokens per block. `ablation` removes one part of `dynamic`:
    "no_density" (same ratio at every level), "no_proximal" / "no_holistic" (drop instead
    of aggregating), "no_aggregation" (both), "no_rescore" (scores of block 0 reused),
    "no_unmerge" (a merged
    token's decoder memory keeps its backbone feature, as a dropped one's does);
    "no_center_distance" is a
    loss weight, handled by the trainer."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {METHODS}")
    if method == "dense":
        return EncoderSpec()
    flat = tuple(min(1.0, budget) for _ in range(num_blocks))
    casc = tuple(min(1.0, budget * c) for c in cascade)
    if method == "topk":
        return EncoderSpec("topk", flat, "global", ("drop",) * num_levels)
    if method == "focus":
        return EncoderSpec("focus", casc, "fixed", ("drop",) * num_levels, topdown=True,
                           level_weights=tuple(focus_level_weights))
    coarse = "context" if holistic == "context" else "holistic"
    modes = tuple("proximal" if l < fine_levels else coarse for l in range(num_levels))
    allocation, rescore = "mass", True
    if ablation == "no_density":
        allocation = "count"
    elif ablation == "no_proximal":
        modes = tuple("drop" if m == "proximal" else m for m in modes)
    elif ablation == "no_holistic":
        modes = tuple("drop" if m == coarse else m for m in modes)
    elif ablation == "no_aggregation":
        modes = ("drop",) * num_levels
    elif ablation == "no_rescore":
        rescore = False
    elif ablation not in ("none", "no_center_distance", "no_unmerge"):
        raise ValueError(f"unknown ablation {ablation!r}")
    assert all(m in tokens.MODES for m in modes)
    return EncoderSpec("dynamic", casc, allocation, modes, rescore=rescore, temperature=temperature,
                       unmerge=ablation != "no_unmerge")
