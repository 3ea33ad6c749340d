"""EARTH and its ablations as pure (init, apply) pairs over one sample.

    y0 = encoder(X(t0));  y_T = diffrax solve of the EANO field over the window (eano.py)
    Â_T = GLTG graph at z_T;  fused = Fusion(z_T, [s_T ‖ i_T ‖ r_T], Â_T)     (fusion.py)
    ŷ = ½ · MLP([fused ‖ h_T]) + W_ar x[-k:]                                  (head + AR residual,
                                                                              as in the released code)

`apply(params, x)` maps one scaled window x [W, N] to the next-h forecast [N]; the graphs
(row-normalised geography, fused geographic+semantic graph) are constants of the model.
`dynamics` picks the form of EANO's vector field (eano.DYNAMICS: "official", the released
code's full d × d gates on every latent; "sirs", a diagonal gate on z and an explicit SIRS
mechanism). Variants: "earth" (full), "no_eano" (generic graph ODE instead of the epidemic mechanism),
"no_gltg" (fixed geographic graph, no learned or semantic graph), "no_xattn" (linear fusion).
"""
from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.earth import eano, fusion

VARIANTS = ("earth", "no_eano", "no_gltg", "no_xattn")


class Head(nn.Module):
    hidden: int
    heads: int
    attention: bool
    ar_lags: int

    @nn.compact
    def __call__(self, y_t, graph, window):
        tokens = jnp.concatenate([y_t["s"], y_t["i"], y_t["r"]], -1)
        fuse = (fusion.CrossAttentionFusion(self.hidden, self.heads) if self.attention
                else fusion.LinearFusion(self.hidden))
        fused = fuse(y_t["z"], tokens, graph)
        hid = nn.relu(nn.Dense(self.hidden)(jnp.concatenate([fused, y_t["h"]], -1)))
        pred = nn.Dense(1, kernel_init=nn.initializers.zeros)(hid)[:, 0]  # starts as the AR model
        ar = nn.Dense(1, name="ar")(window[-self.ar_lags:].T)[:, 0]
        return 0.5 * pred + ar


@dataclasses.dataclass(frozen=True)
class Earth:
    """EARTH forecaster. geo, sem: [N, N] row-normalised graphs (gltg.geo_graph / fused_graph)."""

    geo: np.ndarray
    sem: np.ndarray
    hidden: int = 16
    heads: int = 4
    ar_lags: int = 4
    variant: str = "earth"
    dynamics: str = "official"
    solver: str = "rk4"
    adjoint: str = "recursive_checkpoint"
    dt: float = 1.0
    alpha: float = 3.0

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown EARTH variant {self.variant!r}; allowed: {VARIANTS}")
        if self.dynamics not in eano.DYNAMICS:
            raise ValueError(f"unknown EANO dynamics {self.dynamics!r}; allowed: {eano.DYNAMICS}")

    @property
    def _modules(self):
        return eano.field_and_encoder(self.dynamics, self.hidden,
                                      "neural" if self.variant == "no_eano" else "sir",
                                      learned_graph=self.variant != "no_gltg", alpha=self.alpha)

    @property
    def _field(self):
        return self._modules[0]

    @property
    def _encoder(self):
        return self._modules[1]

    @property
    def _head(self):
        return Head(self.hidden, self.heads, self.variant != "no_xattn", self.ar_lags)

    def _graphs(self):
        geo = jnp.asarray(self.geo, jnp.float32)
        sem = geo if self.variant == "no_gltg" else jnp.asarray(self.sem, jnp.float32)
        return geo, sem

    def _x0(self, x):
        return jnp.stack([x[0], jnp.zeros_like(x[0])], -1)

    def init(self, key, x):
        """params for windows shaped like x [W, N]."""
        k1, k2, k3 = jax.random.split(key, 3)
        geo, sem = self._graphs()
        enc = self._encoder
        p_enc = enc.init(k1, self._x0(x))
        y0 = enc.apply(p_enc, self._x0(x))
        p_field = self._field.init(k2, y0, jnp.zeros((x.shape[1], 2), x.dtype), geo, sem)
        graph = self._field.apply(p_field, y0["z"], geo, method="graph")
        p_head = self._head.init(k3, y0, graph, x)
        return {"encoder": p_enc, "field": p_field, "head": p_head}

    def solve(self, params, x):
        """(y_T, Â_T): the latents at the end of the window and the transmission graph there."""
        geo, sem = self._graphs()
        y0 = self._encoder.apply(params["encoder"], self._x0(x))
        y_t = eano.solve_eano(self._field, params["field"], y0, x, geo, sem, solver=self.solver,
                              adjoint=self.adjoint, dt=self.dt)
        y_t = jax.tree.map(lambda a: a[-1], y_t)
        graph = self._field.apply(params["field"], y_t["z"], geo, method="graph")
        return y_t, graph

    def apply(self, params, x):
        """x [W, N] scaled window -> forecast [N] (scaled)."""
        y_t, graph = self.solve(params, x)
        return self._head.apply(params["head"], y_t, graph, x)
