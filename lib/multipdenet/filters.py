"""Learnable stencil-shaped derivative filters (notes §1.2) as Linen modules.

`DerivativeFilters2D` gives `(u_x, u_y, u_xx, u_yy)` of every channel of a periodic 2-D
field from one 5×5 kernel per derivative order (`lib.multipdenet.stencils`), divided by
h (first order) or h² (second order). The y-derivatives apply the same kernel to the
transposed field, i.e. the transposed kernel to the field. With `laplacian=True` it gives
`(u_x, u_y, ∇²u)` instead, the Laplacian from the one kernel `K₂ + K₂ᵀ`: the same sum as
`u_xx + u_yy` (to float rounding) from half the taps of a learnable 5×5 family (25, not
50), which is all the 2-D right-hand sides use. `DerivativeFilters1D` gives
`(u_x, u_xxx)` for 1-D fields (KdV) from a 5-point and a 7-point stencil.

Padding is periodic (`jnp.pad(mode='wrap')`). Two implementations of the same sums
(`impl`): "shifted" (the default) adds the wrap-padded field's shifted windows times each
kernel's taps, one sum per kernel, skipping the taps that are zero for every parameter
value (a kernel's support is known from its stencil family); XLA fuses each sum into one
loop. "conv" is the reference: one `jax.lax.conv_general_dilated` call per field with all
kernels stacked as output channels, channels moved into the batch axis. On 2 CPU cores
(10 trajectories, 2 channels, 4 kernels, forward only) the shifted sums take 1.1 ms at 32²
and 3.0 ms at 64² against the convolution's 5.6 and 15 ms (`tools/bench/multipdenet_cost.py`
measures the whole Physics Block).

Parameters are the offsets θ of each kernel from the 4th-order central stencil, so the
filters start as the classical finite differences. Modes: "symmetric" (constrained, see
`stencils.py` for the "sum_rules", "p2c2net" and "fd4_taps" layouts), "free" (every kernel entry),
"frozen" (no parameters).
"""
from __future__ import annotations

from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import stencils

Array = jax.Array


class Derivatives2D(NamedTuple):
    """First and second derivatives of a 2-D field, each `(..., H, W, C)`."""

    x: Array
    y: Array
    xx: Array
    yy: Array

    @property
    def lap(self) -> Array:
        """The Laplacian `xx + yy`."""
        return self.xx + self.yy


class GradLap2D(NamedTuple):
    """First derivatives and the Laplacian of a 2-D field, each `(..., H, W, C)`."""

    x: Array
    y: Array
    lap: Array


class Derivatives1D(NamedTuple):
    """First and third derivatives of a 1-D field, each `(..., N, C)`."""

    x: Array
    xxx: Array


STENCIL_IMPLS = ("shifted", "conv")


def _check_mode(mode: str, impl: str) -> None:
    if mode not in stencils.FILTER_MODES:
        raise ValueError(f"unknown filter mode {mode!r}; allowed: {stencils.FILTER_MODES}")
    if impl not in STENCIL_IMPLS:
        raise ValueError(f"unknown stencil implementation {impl!r}; allowed: {STENCIL_IMPLS}")


def support(family: stencils.StencilFamily) -> np.ndarray:
    """Boolean mask of the taps that can be nonzero for some θ (base or any basis kernel)."""
    return (family.base != 0) | np.any(family.basis != 0, axis=0)


def _kernel(module: nn.Module, name: str, family: stencils.StencilFamily, dtype) -> Array:
    """`base + θ · basis`, with θ a zero-initialised parameter (none when the family is fixed)."""
    base = jnp.asarray(family.base, dtype)
    if family.basis.shape[0] == 0:
        return base
    theta = module.param(name, nn.initializers.zeros, (family.basis.shape[0],))
    return base + jnp.tensordot(theta.astype(dtype), jnp.asarray(family.basis, dtype), axes=1)


def apply_stencils_2d(u: Array, kernels: Array) -> Array:
    """Periodic cross-correlation of every channel with every kernel.

    Args:
      u: `(..., H, W, C)`.
      kernels: `(k, k, K)` with odd k.
    Returns:
      `(..., H, W, C, K)`: `out[..., y, x, c, n] = Σ_ij kernels[i, j, n] u[..., y+i-k//2, x+j-k//2, c]`.
    """
    *lead, h, w, c = u.shape
    r = kernels.shape[0] // 2
    x = jnp.moveaxis(u, -1, -3).reshape(-1, h, w, 1)
    x = jnp.pad(x, ((0, 0), (r, r), (r, r), (0, 0)), mode="wrap")
    out = jax.lax.conv_general_dilated(
        x, kernels[:, :, None, :], (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return jnp.moveaxis(out.reshape(*lead, c, h, w, kernels.shape[-1]), -4, -2)


def shifted_stencils_2d(u: Array, kernels: Array, taps: np.ndarray | None = None) -> tuple[Array, ...]:
    """The sums of `apply_stencils_2d` as shifted windows: one `(..., H, W, C)` array per kernel.

    `out[n][..., y, x, c] = Σ_ij kernels[i, j, n] u[..., y+i-k//2, x+j-k//2, c]` over the taps
    with `taps[i, j, n]` true (a static numpy mask, default all), read from the wrap-padded field.
    """
    *lead, h, w, _ = u.shape
    k = kernels.shape[0]
    r = k // 2
    taps = np.ones(kernels.shape, bool) if taps is None else np.asarray(taps, bool)
    if taps.shape != kernels.shape:
        raise ValueError(f"stencil tap mask of shape {taps.shape} does not match kernels {kernels.shape}")
    up = jnp.pad(u, [(0, 0)] * len(lead) + [(r, r), (r, r), (0, 0)], mode="wrap")
    outs = []
    for n in range(kernels.shape[-1]):
        terms = [up[..., i:i + h, j:j + w, :] * kernels[i, j, n] for i, j in zip(*np.nonzero(taps[..., n]))]
        outs.append(sum(terms[1:], terms[0]) if terms else jnp.zeros_like(u))
    return tuple(outs)


def shifted_stencils_1d(u: Array, kernels: Array, taps: np.ndarray | None = None) -> tuple[Array, ...]:
    """`apply_stencils_1d` as shifted windows: `u (..., N, C)`, `kernels (k, K)` -> K arrays `(..., N, C)`."""
    *lead, n, _ = u.shape
    k = kernels.shape[0]
    r = k // 2
    taps = np.ones(kernels.shape, bool) if taps is None else np.asarray(taps, bool)
    if taps.shape != kernels.shape:
        raise ValueError(f"stencil tap mask of shape {taps.shape} does not match kernels {kernels.shape}")
    up = jnp.pad(u, [(0, 0)] * len(lead) + [(r, r), (0, 0)], mode="wrap")
    outs = []
    for m in range(kernels.shape[-1]):
        terms = [up[..., i:i + n, :] * kernels[i, m] for i in np.nonzero(taps[:, m])[0]]
        outs.append(sum(terms[1:], terms[0]) if terms else jnp.zeros_like(u))
    return tuple(outs)


def apply_stencils_1d(u: Array, kernels: Array) -> Array:
    """Periodic cross-correlation along N: `u (..., N, C)`, `kernels (k, K)` -> `(..., N, C, K)`."""
    *lead, n, c = u.shape
    r = kernels.shape[0] // 2
    x = jnp.moveaxis(u, -1, -2).reshape(-1, n, 1)
    x = jnp.pad(x, ((0, 0), (r, r), (0, 0)), mode="wrap")
    out = jax.lax.conv_general_dilated(
        x, kernels[:, None, :], (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC")
    )
    return jnp.moveaxis(out.reshape(*lead, c, n, kernels.shape[-1]), -3, -2)


class DerivativeFilters2D(nn.Module):
    """Learnable ∂x, ∂y, ∂xx, ∂yy on a periodic grid of square cells of side `h`.

    Attributes:
      h: grid spacing (the same along x and y).
      mode: "symmetric", "free" or "frozen".
      layout: for "symmetric": "sum_rules" (5 + 6 parameters, moment conditions hold for
        any θ), "p2c2net" (8 + 8 parameters, the P2C2Net code's layout) or "fd4_taps"
        (1 + 1 parameters on the FD4 stencil's own taps).
      impl: "shifted" (sums of shifted windows over each kernel's support) or "conv" (the
        reference convolution); the same sums, equal to float rounding.
      laplacian: return `GradLap2D` (the Laplacian from the kernel `K₂ + K₂ᵀ`) rather
        than `Derivatives2D`; the same parameters.
    """

    h: float
    mode: str = "symmetric"
    layout: str = "sum_rules"
    impl: str = "shifted"
    laplacian: bool = False

    @nn.compact
    def __call__(self, u: Array) -> Derivatives2D | GradLap2D:
        """`u (..., H, W, C)` -> `Derivatives2D` (or `GradLap2D`) of `(..., H, W, C)` arrays;
        needs H, W >= 5."""
        _check_mode(self.mode, self.impl)
        if min(u.shape[-3:-1]) < 5:
            raise ValueError(f"5×5 derivative filters need a grid of at least 5×5 cells; got {u.shape[-3:-1]}")
        f1 = stencils.first_order_family(self.mode, self.layout)
        f2 = stencils.second_order_family(self.mode, self.layout)
        k1 = _kernel(self, "first_order", f1, u.dtype) / self.h
        k2 = _kernel(self, "second_order", f2, u.dtype) / self.h**2
        s1, s2 = support(f1), support(f2)
        if self.laplacian:
            kernels = jnp.stack([k1, k1.T, k2 + k2.T], axis=-1)
            taps, kind = np.stack([s1, s1.T, s2 | s2.T], -1), GradLap2D
        else:
            kernels = jnp.stack([k1, k1.T, k2, k2.T], axis=-1)
            taps, kind = np.stack([s1, s1.T, s2, s2.T], -1), Derivatives2D
        if self.impl == "shifted":
            return kind(*shifted_stencils_2d(u, kernels, taps))
        out = apply_stencils_2d(u, kernels)
        return kind(*(out[..., n] for n in range(kernels.shape[-1])))


class DerivativeFilters1D(nn.Module):
    """Learnable ∂x (5-point) and ∂xxx (7-point) on a periodic 1-D grid of spacing `h`.

    Attributes:
      h: grid spacing.
      mode: "symmetric" (odd stencils with the consistency moments fixed; 1 + 1
        parameters), "free" (5 + 7) or "frozen".
      impl: "shifted" or "conv", as in `DerivativeFilters2D`.
    """

    h: float
    mode: str = "symmetric"
    impl: str = "shifted"

    @nn.compact
    def __call__(self, u: Array) -> Derivatives1D:
        """`u (..., N, C)` -> `Derivatives1D` of `(..., N, C)` arrays; needs N >= 7."""
        _check_mode(self.mode, self.impl)
        if u.shape[-2] < 7:
            raise ValueError(f"1-D derivative filters need at least 7 grid points; got {u.shape[-2]}")
        f1, f3 = stencils.first_order_family_1d(self.mode), stencils.third_order_family_1d(self.mode)
        k1 = _kernel(self, "first_order", f1, u.dtype) / self.h
        k3 = _kernel(self, "third_order", f3, u.dtype) / self.h**3
        kernels = jnp.stack([jnp.pad(k1, 1), k3], axis=-1)
        if self.impl == "shifted":
            taps = np.stack([np.pad(support(f1), 1), support(f3)], axis=-1)
            return Derivatives1D(*shifted_stencils_1d(u, kernels, taps))
        out = apply_stencils_1d(u, kernels)
        return Derivatives1D(out[..., 0], out[..., 1])

