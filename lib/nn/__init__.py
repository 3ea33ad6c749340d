"""Shared neural-network layers (Flax Linen): FNO and a periodic UNet."""
from lib.nn.fno import FNO, SpectralConv
from lib.nn.unet import UNet

__all__ = ["FNO", "SpectralConv", "UNet"]
