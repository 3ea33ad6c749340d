"""The SimCLR network: a small ResNet backbone f and a 2-layer MLP projection head g.

`SimCLRNet(...)(x)` returns (h, z): h = f(x) (B, stage_widths[-1]) the representation the
linear probe reads, z = g(h) (B, proj_dim) the embedding the contrastive loss sees (it is
L2-normalised inside the losses). The paper's head (App. D) is Linear–BN–ReLU–Linear; BN is
left out here so the network has no batch statistics (a pure function of one image).
"""
from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax

from lib.nn.resnet import SmallResNet

Array = jax.Array


class SimCLRNet(nn.Module):
    stage_widths: Sequence[int] = (16, 32, 64)
    blocks_per_stage: int = 1
    head_hidden: int = 128
    proj_dim: int = 64

    @nn.compact
    def __call__(self, x: Array) -> tuple[Array, Array]:
        h = SmallResNet(tuple(self.stage_widths), self.blocks_per_stage)(x)
        z = nn.Dense(self.proj_dim)(nn.relu(nn.Dense(self.head_hidden)(h)))
        return h, z
