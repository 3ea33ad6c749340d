"""SimCLR-style augmentations of grey-level images, in JAX (pure functions of a key).

Images are (H, W, C) float32 in [0, 1]; `augment_batch` maps (B, H, W, C) with one key,
split into one key per image, so a batch's views are a function of (key, images) alone.
Per image, in this order (SimCLR, Chen et al. 2020, adapted to grey levels):

  1. random resized crop: area fraction a ~ U[min_scale, 1], aspect ratio r with
     log r ~ U[log 3/4, log 4/3], crop (√(a/r)·H) × (√(a·r)·W) at a uniform offset, resized
     back to H × W by bilinear interpolation (`jax.image.scale_and_translate`);
  2. horizontal flip with probability `flip_prob` (0 for digits, whose mirror images are
     other symbols);
  3. colour jitter with probability `jitter_prob`: brightness x + U[−β, β], then contrast
     (x − mean)·U[1 − c, 1 + c] + mean (hue and saturation do not apply to grey levels);
  4. additive Gaussian noise of standard deviation `noise_std`; the result is clipped to [0, 1].
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

Array = jax.Array


class AugmentConfig(NamedTuple):
    min_scale: float = 0.3
    flip_prob: float = 0.0
    jitter_prob: float = 0.8
    brightness: float = 0.4
    contrast: float = 0.4
    noise_std: float = 0.05


def crop_box(key: Array, height: int, width: int, min_scale: float) -> tuple[Array, Array]:
    """(size, offset), each (2,) float [rows, cols], of a random crop inside the image."""
    ka, kr, ko = jax.random.split(key, 3)
    area = jax.random.uniform(ka, (), minval=min_scale, maxval=1.0)
    log_r = jax.random.uniform(kr, (), minval=jnp.log(3 / 4), maxval=jnp.log(4 / 3))
    r = jnp.exp(log_r)
    size = jnp.stack([jnp.minimum(jnp.sqrt(area / r), 1.0) * height,
                      jnp.minimum(jnp.sqrt(area * r), 1.0) * width])
    room = jnp.array([height, width], jnp.float32) - size
    offset = jax.random.uniform(ko, (2,)) * room
    return size, offset


def resized_crop(image: Array, size: Array, offset: Array) -> Array:
    """The crop [offset, offset + size) of (H, W, C) `image`, resized to (H, W, C) bilinearly."""
    h, w = image.shape[:2]
    scale = jnp.array([h, w], jnp.float32) / size
    return jax.image.scale_and_translate(image, image.shape, (0, 1), scale, -offset * scale,
                                         method="linear", antialias=False)


def augment_image(key: Array, image: Array, cfg: AugmentConfig) -> Array:
    """One random view of one (H, W, C) image; see the module docstring for the steps."""
    kc, kf, kj, kb, kk, kn = jax.random.split(key, 6)
    h, w = image.shape[:2]
    x = resized_crop(image, *crop_box(kc, h, w, cfg.min_scale))
    x = jnp.where(jax.random.bernoulli(kf, cfg.flip_prob), x[:, ::-1], x)
    bright = jax.random.uniform(kb, (), minval=-cfg.brightness, maxval=cfg.brightness)
    contrast = jax.random.uniform(kk, (), minval=1 - cfg.contrast, maxval=1 + cfg.contrast)
    jittered = x + bright
    jittered = (jittered - jnp.mean(jittered)) * contrast + jnp.mean(jittered)
    x = jnp.where(jax.random.bernoulli(kj, cfg.jitter_prob), jittered, x)
    x = x + cfg.noise_std * jax.random.normal(kn, x.shape)
    return jnp.clip(x, 0.0, 1.0)


def augment_batch(key: Array, images: Array, cfg: AugmentConfig) -> Array:
    """Independent views of a (B, H, W, C) batch (one key per image)."""
    keys = jax.random.split(key, images.shape[0])
    return jax.vmap(augment_image, in_axes=(0, 0, None))(keys, images, cfg)


def two_views(key: Array, images: Array, cfg: AugmentConfig) -> tuple[Array, Array]:
    """The positive pairs of a batch: two independent views of each image."""
    k1, k2 = jax.random.split(key)
    return augment_batch(k1, images, cfg), augment_batch(k2, images, cfg)
