"""EpiGNN (Xie et al., ECML-PKDD 2022) as a baseline with the (init, apply) interface of
`model.Earth`: one scaled window x [W, N] -> the forecast [N] h steps ahead.

Written from the paper's description and a reading of the public PyTorch code
(Xiefeng69/EpiGNN, src/models.py, src/layers.py, src/utils.py); the code's defaults are the
sizes used here (k = 8 kernels per branch, hidP = 1, so the embedding has 5k = 40
channels; attention width hidA = 64; n = 2 graph-convolution layers; no highway).

    e      = tanh(RegionAwareConv(x))                       [N, 5k]   region embedding
    q, kk  = e W_Q, e W_K                                   [N, hidA]
    g      = Σ_u normalize_row(q kkᵀ)_vu                    [N]       global risk (per region)
    l      = Σ_u A_vu                                       [N]       local risk (degree)
    f      = e + Linear(1→5k)(g) + Linear(1→5k)(l)                   the three embeddings fused
    A_geo  = σ(G ⊙ l lᵀ) ⊙ A                                          gated geographic graph
    A_lrn  = relu(tanh(α (M1 M2ᵀ − M2 M1ᵀ))),  M_i = tanh(α e W_i)    region-aware graph learner
    L      = D⁻¹ 1[A_lrn + A_geo > 0]                                 row-normalised support
    h^{ℓ+1} = elu(L h^ℓ W_ℓ + b_ℓ), h⁰ = f                           n layers
    ŷ      = Linear([h^n ‖ f])

As in the released code, the Laplacian is built from the *support* of A_lrn + A_geo (every
positive entry becomes 1), so the graph learner and the gate G change the graph only through
which entries are positive and receive no gradient through it.

Deviations (both forced by the one-sample interface; EARTH here has neither either): no
BatchNorm after the convolutions and no dropout (the code: p = 0.2).
"""
from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

_xavier = nn.initializers.xavier_uniform()


def _bias_init(key, shape, dtype=jnp.float32):
    """The code's bias initialisation: U(−1/√fan, 1/√fan), fan = the bias length."""
    bound = 1.0 / np.sqrt(shape[0])
    return jax.random.uniform(key, shape, dtype, -bound, bound)


def _dense(features, name=None, use_bias=True):
    return nn.Dense(features, kernel_init=_xavier, bias_init=_bias_init, use_bias=use_bias,
                    name=name)


def global_risk(q: jax.Array, k: jax.Array, eps: float = 1e-12) -> jax.Array:
    """Global transmission risk of each region: q, k [N, a] -> [N], the row sums of q kᵀ
    after each row is scaled to unit L2 norm (the code's F.normalize(dim=-1) then sum)."""
    s = q @ k.T
    norm = jnp.sqrt(jnp.sum(s * s, -1, keepdims=True))
    return jnp.sum(s / jnp.maximum(norm, eps), -1)


def support_laplacian(adj: jax.Array) -> jax.Array:
    """[N, N] -> D⁻¹ B with B = 1[adj > 0] and D its row sums (+1e-12), as the code's
    getLaplaceMat (the entries' values other than their sign are dropped)."""
    b = jnp.where(adj > 0, 1.0, adj)
    return b / (jnp.sum(b, -1, keepdims=True) + 1e-12)


def _temporal_conv(x, w, b, dilation: int = 1):
    """Valid 1-D convolution along time shared by the regions: x [W, N], w [kernel, c],
    b [c] -> [W', N, c] (written as a gather and a matmul, which XLA runs fast on CPU
    under the copies' vmap, where a grouped convolution is slow)."""
    kernel = w.shape[0]
    span = (kernel - 1) * dilation + 1
    idx = np.arange(x.shape[0] - span + 1)[:, None] + dilation * np.arange(kernel)[None, :]
    return jnp.einsum("tkn,kc->tnc", x[idx], w) + b


class RegionAwareConv(nn.Module):
    """Temporal convolutions shared by the regions: x [W, N] -> [N, 5k]. Four branches
    (kernel 3 / 5, dilation 1 / 2) max-pooled over time, and one kernel spanning the window."""

    k: int
    dilation: int = 2

    @nn.compact
    def __call__(self, x):
        w = x.shape[0]
        outs = []
        branches = ((3, 1), (5, 1), (3, self.dilation), (5, self.dilation), (w, 1))
        for j, (kernel, dil) in enumerate(branches):
            if (kernel - 1) * dil + 1 > w:
                raise ValueError(f"window {w} is shorter than the kernel span {(kernel - 1) * dil + 1}")
            # torch's xavier bound for a Conv2d(1, k, (kernel, 1)) weight: fan-in kernel,
            # fan-out k · kernel; 1-D parameters U(±1/√k) as the code's init_weights
            bound = np.sqrt(6.0 / (kernel * (1 + self.k)))
            wgt = self.param(f"conv{j}_w", lambda key, shape, a=bound: jax.random.uniform(
                key, shape, jnp.float32, -a, a), (kernel, self.k))
            bias = self.param(f"conv{j}_b", _bias_init, (self.k,))
            c = _temporal_conv(x, wgt, bias, dil)                      # [W', N, k]
            outs.append(jnp.max(c, 0))                                 # max-pool over time to 1
        return jnp.tanh(jnp.concatenate(outs, -1))                     # [N, 5k]


class EpiGNNModule(nn.Module):
    adjacency: np.ndarray      # [N, N] raw geographic adjacency (the code's data.adj)
    k: int = 8
    hid_a: int = 64
    layers: int = 2
    alpha: float = 1.0

    @nn.compact
    def __call__(self, x):
        n = x.shape[1]
        a = jnp.asarray(self.adjacency, x.dtype)
        e = RegionAwareConv(self.k, name="backbone")(x)                # [N, R]
        r = e.shape[-1]
        g = global_risk(_dense(self.hid_a, "wq")(e), _dense(self.hid_a, "wk")(e))
        deg = jnp.sum(a, -1)                                           # local risk
        f = e + _dense(r, "t_enc")(g[:, None]) + _dense(r, "s_enc")(deg[:, None])
        gate = self.param("d_gate", _xavier, (n, n))
        a_geo = jax.nn.sigmoid(gate * jnp.outer(deg, deg)) * a
        m1 = jnp.tanh(self.alpha * _dense(r, "graph1")(e))
        m2 = jnp.tanh(self.alpha * _dense(r, "graph2")(e))
        a_lrn = nn.relu(jnp.tanh(self.alpha * (m1 @ m2.T - m2 @ m1.T)))
        lap = support_laplacian(a_lrn + a_geo)
        h = f
        for j in range(self.layers):
            wgt = self.param(f"gc{j}_w", _xavier, (r, r))
            b = self.param(f"gc{j}_b", _bias_init, (r,))
            h = nn.elu(lap @ (h @ wgt) + b)
        return _dense(1, "output")(jnp.concatenate([h, f], -1))[:, 0]


@dataclasses.dataclass(frozen=True)
class EpiGNN:
    """EpiGNN forecaster; `adjacency` [N, N] is the benchmark's raw adjacency file."""

    adjacency: np.ndarray
    k: int = 8
    hid_a: int = 64
    layers: int = 2
    loss: str = "mse"          # the code trains on MSE of the scaled targets
    trainable = True

    def _module(self):
        return EpiGNNModule(self.adjacency, k=self.k, hid_a=self.hid_a, layers=self.layers)

    def init(self, key, x):
        return self._module().init(key, x)

    def apply(self, params, x):
        return self._module().apply(params, x)
