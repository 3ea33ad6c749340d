"""Fourier Neural Operator (Li et al., ICLR 2021) for 1-D and 2-D periodic fields, in Linen.

Layout: lifting `Dense(width)` -> `depth` Fourier layers
`v <- GELU(SpectralConv(v) + Dense(v))` (no GELU after the last one, as in Li et al.)
-> projection `Dense(projection_width) -> GELU -> Dense(out_channels)`.

Fields are channels-last: 1-D `(..., N, C)`, 2-D `(..., H, W, C)` with axis H = y and
axis W = x. The input channel count is read from the input at `init`. Every layer is a
Fourier multiplier or acts pointwise, so on a periodic grid the network commutes exactly
with integer translations.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

Array = jax.Array


def _spectral_init(scale: float):
    """Uniform(0, scale) initialiser, the FNO reference code's choice for spectral weights."""

    def init(key: Array, shape: tuple[int, ...], dtype=jnp.float32) -> Array:
        return scale * jax.random.uniform(key, shape, dtype)

    return init


class SpectralConv(nn.Module):
    """Fourier-space linear map on the `modes` lowest modes per spatial dimension.

    1-D: `rfft` along N keeps modes `0 .. modes-1`. 2-D: `rfft2` (real FFT along x = W)
    keeps `kx in [0, modes)` and both `ky in [0, modes)` and `ky in [-modes, 0)`, each block
    with its own weights. Higher modes are set to zero. Complex weights are stored as
    separate real and imaginary float parameters of shape `(modes[, modes], C_in, C_out)`.

    Attributes:
      out_channels: number of output channels.
      modes: modes kept per spatial dimension; needs `modes <= n // 2` for every spatial size n.
      spatial_dims: 1 or 2.
    """

    out_channels: int
    modes: int
    spatial_dims: int = 2

    def _weight(self, name: str, shape: tuple[int, ...]) -> Array:
        scale = 1.0 / (shape[-2] * shape[-1])
        real = self.param(f"{name}_real", _spectral_init(scale), shape)
        imag = self.param(f"{name}_imag", _spectral_init(scale), shape)
        return jax.lax.complex(real, imag)

    @nn.compact
    def __call__(self, x: Array) -> Array:
        """Map `(..., *spatial, C_in)` to `(..., *spatial, out_channels)`."""
        if self.spatial_dims not in (1, 2):
            raise ValueError(f"spatial_dims must be 1 or 2, got {self.spatial_dims}")
        spatial = x.shape[-1 - self.spatial_dims : -1]
        if min(spatial) < 2 * self.modes:
            raise ValueError(
                f"modes={self.modes} needs every spatial size >= {2 * self.modes}; got grid {spatial}"
            )
        c_in, m = x.shape[-1], self.modes
        if self.spatial_dims == 1:
            (n,) = spatial
            x_hat = jnp.fft.rfft(x, axis=-2)[..., :m, :]
            w = self._weight("w", (m, c_in, self.out_channels))
            y_hat = jnp.einsum("...mi,mio->...mo", x_hat, w)
            y_hat = jnp.pad(y_hat, [(0, 0)] * (y_hat.ndim - 2) + [(0, n // 2 + 1 - m), (0, 0)])
            return jnp.fft.irfft(y_hat, n=n, axis=-2)
        h, w_ = spatial
        x_hat = jnp.fft.rfft2(x, axes=(-3, -2))
        w_pos = self._weight("w_pos", (m, m, c_in, self.out_channels))
        w_neg = self._weight("w_neg", (m, m, c_in, self.out_channels))
        y_pos = jnp.einsum("...yxi,yxio->...yxo", x_hat[..., :m, :m, :], w_pos)
        y_neg = jnp.einsum("...yxi,yxio->...yxo", x_hat[..., h - m :, :m, :], w_neg)
        zeros = jnp.zeros(y_pos.shape[:-3] + (h - 2 * m, m, self.out_channels), y_pos.dtype)
        y_hat = jnp.concatenate([y_pos, zeros, y_neg], axis=-3)
        y_hat = jnp.pad(y_hat, [(0, 0)] * (y_hat.ndim - 2) + [(0, w_ // 2 + 1 - m), (0, 0)])
        return jnp.fft.irfft2(y_hat, s=(h, w_), axes=(-3, -2))


class FNO(nn.Module):
    """Fourier Neural Operator on a periodic 1-D or 2-D grid.

    Attributes:
      out_channels: output channels.
      modes: Fourier modes kept per spatial dimension in every Fourier layer.
      width: channels of the hidden (lifted) representation.
      depth: number of Fourier layers.
      projection_width: hidden channels of the two-layer pointwise projection.
      spatial_dims: 1 (fields `(..., N, C)`) or 2 (fields `(..., H, W, C)`).
      zero_init_output: start the last projection at zero, so the network outputs 0 at
        init (used for residual corrections that should start as the identity).
    """

    out_channels: int
    modes: int = 12
    width: int = 12
    depth: int = 2
    projection_width: int = 50
    spatial_dims: int = 2
    zero_init_output: bool = False

    @nn.compact
    def __call__(self, x: Array) -> Array:
        """Map `(..., *spatial, C_in)` to `(..., *spatial, out_channels)`."""
        v = nn.Dense(self.width, name="lift")(x)
        for i in range(self.depth):
            spectral = SpectralConv(self.width, self.modes, self.spatial_dims, name=f"spectral_{i}")
            v = spectral(v) + nn.Dense(self.width, name=f"skip_{i}")(v)
            if i < self.depth - 1:
                v = nn.gelu(v)
        v = nn.gelu(nn.Dense(self.projection_width, name="project_hidden")(v))
        out_init = nn.initializers.zeros if self.zero_init_output else nn.linear.default_kernel_init
        return nn.Dense(self.out_channels, kernel_init=out_init, name="project_out")(v)
