"""Shared neural-network layers (Flax Linen): FNO, a periodic UNet and a small ResNet;
`tasks.py`: the classifier `train_loop.Task` several papers train."""
from lib.nn.fno import FNO, SpectralConv
from lib.nn.resnet import BasicBlock, SmallResNet
from lib.nn.unet import UNet

__all__ = ["BasicBlock", "FNO", "SmallResNet", "SpectralConv", "UNet"]
