"""GLTG: the global-trend-guided local transmission graph, and the DTW semantic graph.

Learned graph from the global latent z [N, d] (MTGNN-style, released `GraphLearner`):

    M1 = tanh(α W1 z),  M2 = tanh(α W2 z),  a = rownorm(relu(tanh(α (M1 M2ᵀ - M2 M1ᵀ))))

gated with the (row-normalised) geographic adjacency Ā_geo,

    c = σ(w a + b),   Â = rownorm(Ā_geo ⊙ c + a ⊙ (1 - c)).

Deviation: the released gate multiplies a by an N × N weight matrix (tying the model to one
region order and size); here w, b are scalars, so the whole model is equivariant to
relabelling the regions (tested).

Semantic graph: DTW distances between the regions' training series; each region keeps
its k **most** similar regions (smallest distance), unioned with the geographic adjacency,
for the adaptive graph convolution of z. The released `data.py` zeroes the N - k smallest
distances per row, i.e. keeps the k *least* similar regions; the paper motivates the graph
by regions with similar trends, so "most" is the default and "least" reproduces the code.
"""
from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

SELECTIONS = ("most", "least")


def row_normalize(a, eps: float = 1e-8):
    """a / rowsum(a) for non-negative a [..., N, N] (all-zero rows stay zero)."""
    return a / (a.sum(axis=-1, keepdims=True) + eps)


class GraphLearner(nn.Module):
    """z [N, d], geo [N, N] (row-normalised) -> Â [N, N] row-stochastic."""

    hidden: int
    alpha: float = 3.0

    @nn.compact
    def __call__(self, z, geo):
        m1 = jnp.tanh(self.alpha * nn.Dense(self.hidden, name="w1")(z))
        m2 = jnp.tanh(self.alpha * nn.Dense(self.hidden, name="w2")(z))
        a = nn.relu(jnp.tanh(self.alpha * (m1 @ m2.T - m2 @ m1.T)))
        a = row_normalize(a)
        w = self.param("gate_w", nn.initializers.constant(1.0), ())
        b = self.param("gate_b", nn.initializers.constant(0.0), ())
        c = nn.sigmoid(w * a + b)
        return row_normalize(geo * c + a * (1.0 - c))


def dtw_distances(series: np.ndarray) -> np.ndarray:
    """Dynamic-time-warping distances [N, N] between the columns of series [T, N] (|·| cost),
    on z-scored columns; the DP runs over anti-diagonals for all pairs at once."""
    x = np.asarray(series, dtype=np.float64)
    x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    t, n = x.shape
    # diagonal arrays indexed by i (row of the DP table); acc[i, j] lives on diagonal i + j
    prev2 = np.full((t + 1, n, n), np.inf)   # diagonal d - 2
    prev1 = np.full((t + 1, n, n), np.inf)   # diagonal d - 1
    prev2[0] = 0.0                           # acc[0, 0] on diagonal 0
    for diag in range(2, 2 * t + 1):
        cur = np.full((t + 1, n, n), np.inf)
        i = np.arange(max(1, diag - t), min(t, diag - 1) + 1)
        j = diag - i
        best = np.minimum(np.minimum(prev1[i - 1], prev1[i]), prev2[i - 1])
        cur[i] = np.abs(x[i - 1][:, :, None] - x[j - 1][:, None, :]) + best
        prev2, prev1 = prev1, cur
    return prev1[t]


def semantic_graph(series: np.ndarray, k: int, select: str = "most") -> np.ndarray:
    """0/1 [N, N]: for each region its k most (or least) DTW-similar other regions."""
    if select not in SELECTIONS:
        raise ValueError(f"unknown semantic selection {select!r}; allowed: {SELECTIONS}")
    dist = dtw_distances(series)
    n = dist.shape[0]
    k = min(k, n - 1)
    off = dist + np.diag(np.full(n, np.inf if select == "most" else -np.inf))
    order = np.argsort(off if select == "most" else -off, axis=1, kind="stable")[:, :k]
    out = np.zeros((n, n))
    np.put_along_axis(out, order, 1.0, axis=1)
    return out


def fused_graph(adjacency: np.ndarray, semantic: np.ndarray) -> np.ndarray:
    """Row-normalised union of the geographic and semantic graphs with self loops [N, N]."""
    u = ((adjacency > 0) | (semantic > 0) | np.eye(adjacency.shape[0], dtype=bool)).astype(np.float64)
    return u / u.sum(1, keepdims=True)


def geo_graph(adjacency: np.ndarray) -> np.ndarray:
    """Row-normalised geographic adjacency with self loops, D^{-1}(A + I) [N, N]."""
    a = np.asarray(adjacency, dtype=np.float64) * (1 - np.eye(adjacency.shape[0])) + np.eye(adjacency.shape[0])
    return a / a.sum(1, keepdims=True)
