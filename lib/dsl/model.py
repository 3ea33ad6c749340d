"""The DSL approximator (notes §B "Approximator") and its matched-size MLP baseline.

For an input x ∈ Ω (n,):

    1. γ_x: the field line of a through x, from entry γ(t⁻) to exit γ(t⁺), on N uniform nodes
       (lib.dsl.field_lines); L = t⁺ − t⁻, s₀ = −t⁻ the position of x on it.
    2. p, q, w at the nodes (lib.dsl.field.Coefficients) -> the SL problem
       −(p u′)′ + q u = λ w u on [0, L], u(0) = u(L) = 0; first K eigenpairs (λ_k, u_k)
       (lib.dsl.sturm_liouville; gradients by implicit differentiation).
    3. Normalisation of u_k (config `amplitude`):
         "entry_slope" (the paper's): u_k′(0) = v_k(γ(t⁻)), v a network of the entry point —
                        u_k = v_k(γ(t⁻)) · φ_k / φ_k′(0) for the w-normalised φ_k;
         "w_norm":      u_k = φ_k, w-orthonormal on the line (∫ u_i u_j w = δ_ij);
         "sup_norm":    u_k = v_k(γ(t⁻)) · φ_k / max_t |φ_k| (bounded by |v_k|; ours, after
                        seeing entry-slope amplitudes reach ~60 where w concentrates a mode
                        far from the entry).
    4. f(x) = Σ_k c_k u_k(s₀) + b: one linear combination per output (class logit or
       regression target); c (K, C) and b (C,) global. [inferred: the notes leave open
       whether the coefficients are global; with "entry_slope" the product c_k v_k(γ(t⁻))
       makes them functions of the field line, constant along it.]

Everything is a pure function of a params dict {"field", "coef", "amp", "head"}.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.dsl import field as field_lib
from lib.dsl import field_lines as fl
from lib.dsl import sturm_liouville as sl
from lib.nn.mlp import MLP, num_params

AMPLITUDES = ("entry_slope", "w_norm", "sup_norm")


@dataclasses.dataclass(frozen=True)
class DSLConfig:
    """Hyper-parameters of the approximator (config block `model`, see configs/dsl/dsl.py)."""
    num_modes: int = 10
    num_nodes: int = 32
    field_widths: Sequence[int] = (32,)
    coef_widths: Sequence[int] = (32,)
    amp_widths: Sequence[int] = (32,)
    activation: str = "tanh"
    amplitude: str = "entry_slope"
    mass: str = "lumped"
    grad: str = "implicit"
    p_min: float = 0.05
    w_min: float = 0.05
    line: fl.LineConfig = fl.LineConfig()

    def check(self) -> None:
        """`ValueError` naming the first bad option (run before any compute)."""
        if self.amplitude not in AMPLITUDES:
            raise ValueError(f"amplitude = {self.amplitude!r} is not one of {AMPLITUDES}")
        if self.mass not in sl.MASS_KINDS:
            raise ValueError(f"mass = {self.mass!r} is not one of {sl.MASS_KINDS}")
        if self.num_modes < 1 or self.num_modes > sl.max_modes(self.num_nodes):
            raise ValueError(f"num_modes K = {self.num_modes} is not allowed: num_nodes = "
                             f"{self.num_nodes} gives {sl.max_modes(self.num_nodes)} interior "
                             f"unknowns, so 1 <= K <= {sl.max_modes(self.num_nodes)}")
        fl.check_line_config(self.line)


class Evaluation(NamedTuple):
    """Per input: basis values (K,) at s₀, eigenvalues (K,), line length (), position (),
    whether both ends exited Ω () and the entry point (n,)."""
    basis: jax.Array
    eigenvalues: jax.Array
    length: jax.Array
    position: jax.Array
    exited: jax.Array
    entry: jax.Array


class DSL:
    """init/apply of the DSL approximator with `dim` inputs and `out` outputs."""

    def __init__(self, cfg: DSLConfig, dim: int, out: int):
        cfg.check()
        self.cfg, self.dim, self.out = cfg, dim, out
        self.field = field_lib.VectorField(dim, tuple(cfg.field_widths), cfg.activation)
        self.coef = field_lib.Coefficients(tuple(cfg.coef_widths), cfg.activation, cfg.p_min,
                                           cfg.w_min)
        self.amp = field_lib.Amplitudes(cfg.num_modes, tuple(cfg.amp_widths), cfg.activation)
        self.head = nn.Dense(out)

    def init(self, key: jax.Array) -> dict:
        k = jax.random.split(key, 4)
        z = jnp.zeros((1, self.dim))
        params = {"field": self.field.init(k[0], z), "coef": self.coef.init(k[1], z),
                  "head": self.head.init(k[3], jnp.zeros((1, self.cfg.num_modes)))}
        if self.cfg.amplitude in ("entry_slope", "sup_norm"):
            params["amp"] = self.amp.init(k[2], z)
        return params

    def _field_fn(self, z, field_params):
        return self.field.apply(field_params, z)

    def evaluate_one(self, params: dict, x: jax.Array) -> Evaluation:
        """Steps 1–3 of the module docstring for one input x (n,)."""
        cfg = self.cfg
        line = fl.sample(self._field_fn, params["field"], x, cfg.line, cfg.num_nodes)
        p, q, w = self.coef.apply(params["coef"], line.points)
        lam, u = sl.solve(p, q, w, line.length, cfg.num_modes, mass=cfg.mass, grad=cfg.grad)
        value = fl.interpolate(u, line.length, line.position)
        if cfg.amplitude == "entry_slope":
            h = line.length / (cfg.num_nodes - 1)
            slope = u[1] / h                                   # φ_k′(0) (> 0 by the sign fix)
            v = self.amp.apply(params["amp"], line.line.entry)
            value = v * value / slope
        elif cfg.amplitude == "sup_norm":
            v = self.amp.apply(params["amp"], line.line.entry)
            value = v * value / jnp.max(jnp.abs(u), axis=0)
        return Evaluation(value, lam, line.length, line.position,
                          jnp.all(line.line.exited), line.line.entry)

    def evaluate(self, params: dict, x: jax.Array) -> Evaluation:
        """`evaluate_one` over a batch x (B, n)."""
        return jax.vmap(self.evaluate_one, in_axes=(None, 0))(params, x)

    def apply(self, params: dict, x: jax.Array) -> jax.Array:
        """f(x): (B, n) -> (B, out), step 4."""
        return self.head.apply(params["head"], self.evaluate(params, x).basis)


def count(params) -> int:
    """Number of scalar parameters in a pytree."""
    return int(sum(a.size for a in jax.tree.leaves(params)))


def dsl_param_count(cfg: DSLConfig, dim: int, out: int) -> int:
    """Parameters of DSL(cfg, dim, out), from shapes only (no compute)."""
    model = DSL(cfg, dim, out)
    return count(jax.eval_shape(model.init, jax.random.key(0)))


def mlp_baseline(dim: int, out: int, depth: int, budget: int, activation: str = "relu"
                 ) -> tuple[MLP, int]:
    """The MLP with `depth` equal hidden layers whose parameter count is closest to `budget`;
    returns (module, its parameter count)."""
    from lib.nn.mlp import width_for_budget
    width = width_for_budget(budget, dim, out, depth)
    return MLP((width,) * depth, out, activation), num_params(dim, (width,) * depth, out)
