"""Baselines with the same Linen interface as `model.ANOVATPNN` (see model.py's docstring).

* `NAM` — Neural Additive Model (Agarwal et al. 2021); with max_order = 2 it is NA²M: one
  ReLU MLP per feature and per pair, f_S = MLP_S(x_S). No identifiability constraint, only
  a learned intercept — the components are defined up to shifts between them.
* `NBM` — Neural Basis Model (Radenovic et al. 2022); with max_order = 2 it is NB²M: one
  MLP per order shared by all components of that order produces B basis functions
  h_b(x_S), and f_S = Σ_b w_{S,b} h_b(x_S). (The reference adds batch-norm and basis
  dropout; omitted here.)
* `MLP` — a plain ReLU network on all features (prediction only: no components).

The per-component MLPs of NAM are evaluated for all components at once with batched
weights (C, fan_in, fan_out) and einsum, not a Python loop.
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.anova_tpnn import basis
from lib.anova_tpnn.model import (ANOVATPNN, component_orders, init_from_data,
                                  output_from_components)
from lib.nn import mlp as nn_mlp


def _symmetric_uniform(key, shape, dtype=jnp.float32):
    return jax.random.uniform(key, shape, dtype, minval=-1.0, maxval=1.0)


def _index(num_features: int, max_order: int) -> dict:
    return {o: basis.component_index(num_features, o)
            for o in component_orders(num_features, max_order)}


class NAM(nn.Module):
    """NA^dM: per order o, weights W_l (C_o, fan_in, fan_out), biases (C_o, fan_out)."""

    num_features: int
    max_order: int = 2
    hidden: Sequence[int] = (32, 16)

    def setup(self):
        self.index = _index(self.num_features, self.max_order)
        layers = {}
        for o, idx in self.index.items():
            sizes = (o, *self.hidden, 1)
            for li, (fi, fo) in enumerate(zip(sizes[:-1], sizes[1:])):
                init = nn.initializers.variance_scaling(2.0 if li < len(sizes) - 2 else 1.0,
                                                        "fan_in", "truncated_normal",
                                                        in_axis=-2, out_axis=-1,
                                                        batch_axis=(0,))
                layers[f"w_{o}_{li}"] = self.param(f"w_{o}_{li}", init, (len(idx), fi, fo))
                # first-layer biases U(-1, 1) spread the ReLU kinks over the inputs' [-1, 1]
                bias_init = _symmetric_uniform if li == 0 else nn.initializers.zeros
                layers[f"c_{o}_{li}"] = self.param(f"c_{o}_{li}", bias_init, (len(idx), fo))
        self.layers = layers
        self.intercept = self.param("intercept", nn.initializers.zeros, ())

    def constants(self, x: jax.Array, weights: jax.Array | None = None) -> dict:
        return {}

    def components(self, x: jax.Array, consts: dict | None = None) -> dict:
        out = {0: jnp.broadcast_to(self.intercept, x.shape[:1])}
        depth = len(self.hidden) + 1
        for o, idx in self.index.items():
            h = x[:, idx]                                             # (n, C, o)
            for li in range(depth):
                h = jnp.einsum("nci,cio->nco", h, self.layers[f"w_{o}_{li}"])
                h = h + self.layers[f"c_{o}_{li}"]
                if li < depth - 1:
                    h = nn.relu(h)
            out[o] = h[..., 0]
        return out

    def __call__(self, x: jax.Array, consts: dict | None = None) -> jax.Array:
        return output_from_components(self.components(x, consts))


class _SharedBases(nn.Module):
    """R^o -> R^B, the shared basis network of one order."""

    hidden: Sequence[int]
    num_bases: int

    @nn.compact
    def __call__(self, h):
        for width in self.hidden:
            h = nn.relu(nn.Dense(width)(h))
        return nn.Dense(self.num_bases)(h)


class NBM(nn.Module):
    """NB^dM: per order o a shared `_SharedBases` and mixing weights (C_o, B)."""

    num_features: int
    max_order: int = 2
    hidden: Sequence[int] = (64, 32)
    num_bases: int = 64

    def setup(self):
        self.index = _index(self.num_features, self.max_order)
        self.bases = {str(o): _SharedBases(tuple(self.hidden), self.num_bases,
                                           name=f"bases_{o}") for o in self.index}
        self.mix = {str(o): self.param(f"mix_{o}", nn.initializers.lecun_normal(),
                                       (len(idx), self.num_bases)) for o, idx in self.index.items()}
        self.intercept = self.param("intercept", nn.initializers.zeros, ())

    def constants(self, x: jax.Array, weights: jax.Array | None = None) -> dict:
        return {}

    def components(self, x: jax.Array, consts: dict | None = None) -> dict:
        out = {0: jnp.broadcast_to(self.intercept, x.shape[:1])}
        for o, idx in self.index.items():
            h = self.bases[str(o)](x[:, idx])                         # (n, C, B)
            out[o] = jnp.einsum("ncb,cb->nc", h, self.mix[str(o)])
        return out

    def __call__(self, x: jax.Array, consts: dict | None = None) -> jax.Array:
        return output_from_components(self.components(x, consts))


class MLP(nn_mlp.MLP):
    """`lib.nn.mlp.MLP` (ReLU, one output) with this module's model interface: x (n, p) ->
    (n,), no constants (prediction baseline; `components` is not defined). Same params
    (Dense_0 … Dense_k) and outputs as the plain ReLU stack it replaces."""

    def constants(self, x: jax.Array, weights: jax.Array | None = None) -> dict:
        return {}

    @nn.compact
    def __call__(self, x: jax.Array, consts: dict | None = None) -> jax.Array:
        return super().__call__(x)[:, 0]


# ----------------------------------------------------------------------------- registry

MODEL_NAMES = ("tpnn", "nam", "nbm", "mlp")
HAS_COMPONENTS = {"tpnn": True, "nam": True, "nbm": True, "mlp": False}


def build(name: str, num_features: int, cfg) -> nn.Module:
    """The model `name` ∈ MODEL_NAMES from the config block `cfg` (config.model)."""
    if name == "tpnn":
        return ANOVATPNN(num_features, cfg.max_order, cfg.num_units)
    if name == "nam":
        return NAM(num_features, cfg.max_order, tuple(cfg.nam_hidden))
    if name == "nbm":
        return NBM(num_features, cfg.max_order, tuple(cfg.nbm_hidden), cfg.nbm_bases)
    if name == "mlp":
        return MLP(widths=tuple(cfg.mlp_hidden), out=1, activation="relu")
    raise ValueError(f"unknown model {name!r}; expected one of {MODEL_NAMES}")


def init_params(model: nn.Module, key: jax.Array, x_sorted: jax.Array) -> dict:
    """Parameters from the training rows x_sorted (n, p), each column sorted ascending:
    ANOVA-TPNN gets its data-aware init, the baselines Linen's."""
    if isinstance(model, ANOVATPNN):
        return init_from_data(model, key, x_sorted)
    return model.init(key, x_sorted[:2])


# ----------------------------------------------------------------------------- EBM (optional)


def require_interpret() -> None:
    """ImportError with the install command when the optional interpretML is missing."""
    try:
        import interpret.glassbox  # noqa: F401
    except ImportError as err:
        raise ImportError("ebm.enabled=True needs interpretML: pip install interpret-core "
                          "(or set --config.ebm.enabled=False)") from err


def fit_ebm(x_train, y_train, x_eval, names: list, task: str, cfg, seed: int
            ) -> tuple[np.ndarray, np.ndarray, float]:
    """interpretML Explainable Boosting Machine (CPU reference, not JAX).

    Fits on (x_train, y_train) with `cfg.interactions` FAST-selected pairs and
    `cfg.outer_bags` bags. Returns (the EBM's own prediction at x_eval (N,) — the
    regression output, or the positive-class logit —, its term contributions (N, C) on the
    columns `names` — a term the EBM did not select is a zero column —, its intercept)."""
    require_interpret()
    from interpret.glassbox import (ExplainableBoostingClassifier,
                                    ExplainableBoostingRegressor)
    cls = ExplainableBoostingClassifier if task == "classification" else ExplainableBoostingRegressor
    ebm = cls(interactions=cfg.interactions, outer_bags=cfg.outer_bags, random_state=seed,
              n_jobs=1)
    ebm.fit(np.asarray(x_train, np.float64), np.asarray(y_train))
    x_eval = np.asarray(x_eval, np.float64)
    terms = ebm.eval_terms(x_eval)                                     # (N, T)
    comps = np.zeros((len(x_eval), len(names)))
    column = {k: i for i, k in enumerate(names)}
    for t, feats in enumerate(ebm.term_features_):
        key = tuple(sorted(int(f) for f in feats))
        if key not in column:
            raise ValueError(f"EBM term {key} is not a component of order <= "
                             f"{max(len(k) for k in names)}")
        comps[:, column[key]] += terms[:, t]
    if task == "classification":
        p = np.clip(ebm.predict_proba(x_eval)[:, 1], 1e-12, 1 - 1e-12)
        pred = np.log(p) - np.log1p(-p)
    else:
        pred = ebm.predict(x_eval)
    return pred, comps, float(np.asarray(ebm.intercept_).ravel()[0])
