"""A small ResNet for low-resolution images (Linen): CIFAR-style stem, basic blocks, GAP.

`SmallResNet(stage_widths=(16, 32, 64), blocks_per_stage=1)` maps (B, H, W, C) images to
(B, stage_widths[-1]) features: a 3×3 stride-1 stem (no max-pool, as in the CIFAR variant
of He et al. 2016), then per stage `blocks_per_stage` basic blocks (two 3×3 convolutions
and an identity or 1×1 projection shortcut), the first block of every stage after the first
with stride 2, and a global average pool. Normalisation is GroupNorm (`norm="group"`,
groups = min(8, width)) or none; it has no batch statistics, so the network is a pure
function of (params, x), and its output for one image does not depend on the others in
the batch (which keeps data-parallel sharding exact).
"""
from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax

Array = jax.Array


def _norm(kind: str, width: int):
    if kind == "group":
        return nn.GroupNorm(num_groups=min(8, width))
    if kind == "none":
        return lambda x: x
    raise ValueError(f"norm must be 'group' or 'none', got {kind!r}")


class BasicBlock(nn.Module):
    """conv3×3(stride) → norm → ReLU → conv3×3 → norm, plus shortcut, → ReLU."""

    width: int
    stride: int = 1
    norm: str = "group"

    @nn.compact
    def __call__(self, x: Array) -> Array:
        s = (self.stride, self.stride)
        y = nn.Conv(self.width, (3, 3), strides=s, padding="SAME", use_bias=False)(x)
        y = nn.relu(_norm(self.norm, self.width)(y))
        y = nn.Conv(self.width, (3, 3), padding="SAME", use_bias=False)(y)
        y = _norm(self.norm, self.width)(y)
        if self.stride != 1 or x.shape[-1] != self.width:
            x = nn.Conv(self.width, (1, 1), strides=s, use_bias=False)(x)
        return nn.relu(x + y)


class SmallResNet(nn.Module):
    """(B, H, W, C) -> (B, stage_widths[-1]) features; see the module docstring."""

    stage_widths: Sequence[int] = (16, 32, 64)
    blocks_per_stage: int = 1
    norm: str = "group"

    @nn.compact
    def __call__(self, x: Array) -> Array:
        if x.ndim != 4:
            raise ValueError(f"SmallResNet expects (batch, H, W, C) images, got {x.shape}")
        w0 = self.stage_widths[0]
        x = nn.relu(_norm(self.norm, w0)(nn.Conv(w0, (3, 3), padding="SAME", use_bias=False)(x)))
        for i, width in enumerate(self.stage_widths):
            for j in range(self.blocks_per_stage):
                stride = 2 if (i > 0 and j == 0) else 1
                x = BasicBlock(width, stride, self.norm)(x)
        return x.mean(axis=(1, 2))
