"""MultiPDENet (notes §1.1): a learnable Physics Block stepped at two time scales.

The reconstruction used here (notes §1.1 "A plausible reconstruction"; the official code
was not available):

    for k in macro steps:                                    # ΔT, the data's time step
        u = u_k
        for m in 0 .. M-1:                                   # δt = ΔT / M
            u = u + ∫_δt F(u, D_θ(u + Corr(u))) dτ + δt·MiNN(u)  # Eq. (3): RK4 (or Euler) + MiNN
        u_{k+1} = u + ΔT·MaNN(u)                                # once per macro step

- F is the known PDE right-hand side (`physics.py`); D_θ the stencil filters
  (`filters.py`), applied to the corrected state ũ = u + Corr(u) while advecting
  velocities and reaction terms use u (P2C2Net's `RCNN.rk`). Corr is called at every
  RK stage, as in P2C2Net (`corrector_every="stage"`, the default). Cheaper options:
  "micro" evaluates `c = Corr(u_m)` once at the start of each micro step and uses
  `D_θ(v + c)` at every stage v of that step; "macro" evaluates `c = Corr(u_k)` once per
  macro step and holds it for all M micro steps (16 → 4 → 1 corrector calls per ΔT with
  RK4 and M = 4). All three are the classical solver when Corr outputs zero.
- Corr, MiNN and MaNN are residual: each adds its output to the state it corrects, and by
  default their last layer starts at zero, so at initialisation the model *is* the
  classical 4th-order FD + RK4 solver on the coarse grid. P2C2Net's FNO replaces the
  field (ũ = FNO(u)); the residual form keeps "network disabled" and "network zeroed"
  the same model. MiNN and MaNN see only the current state (no history).
- MiNN and MaNN predict correction *rates*: their outputs are multiplied by the step they
  correct (δt, ΔT). The correction then scales with the step like the integral beside it,
  and an optimizer's first updates of the zero-initialised output layers perturb the state
  by O(lr·δt) instead of O(lr) per step (with Adam at lr 3e-3 the unscaled form raised the
  Burgers window loss 1000-fold in the first steps before recovering).
- The networks are Linen modules held by `MultiPDENet`; the time stepping is pure
  functions of `(model, params, u)` (`micro_step`, `macro_step`, `rollout`) with the
  parameters passed through the integrator's `args`, `lax.scan` over steps and
  `jax.checkpoint` around each micro step.

Ablations (notes §1.1): `filter_mode` "frozen" (fixed FD) / "free" (unconstrained), a
`None` network spec (no Corr / MiNN / MaNN), `integrator="euler"`.
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable, Mapping, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.multipdenet import physics
from lib.multipdenet.filters import STENCIL_IMPLS, DerivativeFilters1D, DerivativeFilters2D
from lib.nn import FNO, UNet
from lib.pde.integrators import SOLVERS, make_stepper

Array = jax.Array


class System(NamedTuple):
    """A PDE the Physics Block knows: its right-hand side, channel count and dimension."""

    rhs: Callable[..., Array]
    channels: int
    spatial_dims: int


SYSTEMS: dict[str, System] = {
    "burgers": System(physics.burgers_rhs, 2, 2),
    "gray_scott": System(physics.gray_scott_rhs, 2, 2),
    "kdv": System(physics.kdv_rhs, 1, 1),
    "navier_stokes": System(physics.navier_stokes_rhs, 2, 2),
}

# P2C2Net's correction FNO (MindFlow config/burgers.json, notes §1.4); needs grids >= 24.
DEFAULT_NET: Mapping[str, Any] = types.MappingProxyType(
    {"arch": "fno", "modes": 12, "width": 12, "depth": 2, "projection_width": 50}
)
NETS: dict[str, type[nn.Module]] = {"fno": FNO, "unet": UNet}
CORRECTOR_EVERY = ("stage", "micro", "macro")


class MultiPDENet(nn.Module):
    """The learned maps of MultiPDENet at one state; time stepping lives in `rollout`.

    Attributes:
      physics: `F(u, derivatives) -> ∂t u`, e.g. `partial(physics.burgers_rhs, viscosity=0.005)`.
      filters: `DerivativeFilters2D` or `DerivativeFilters1D`.
      macro_dt: ΔT, the time step of the data.
      n_micro: M, micro steps per macro step (δt = ΔT / M).
      integrator: "rk4" or "euler".
      corrector, micro_net, macro_net: Corr, MiNN, MaNN (channels in = out), or None.
      corrector_every: "stage" (Corr at every RK stage, the paper's), "micro" (once per
        micro step) or "macro" (once per macro step); see the module docstring.
    """

    physics: Callable[..., Array]
    filters: nn.Module
    macro_dt: float
    n_micro: int = 4
    integrator: str = "rk4"
    corrector: nn.Module | None = None
    micro_net: nn.Module | None = None
    macro_net: nn.Module | None = None
    corrector_every: str = "stage"

    def rhs(self, u: Array) -> Array:
        """Physics Block `F(u, D_θ(u + Corr(u)))`: `(..., *spatial, C)` -> same shape."""
        corrected = u if self.corrector is None else u + self.corrector(u)
        return self.physics(u, self.filters(corrected))

    def correction(self, u: Array) -> Array:
        """Corr(u); zeros when there is no corrector."""
        return jnp.zeros_like(u) if self.corrector is None else self.corrector(u)

    def rhs_corrected_by(self, u: Array, c: Array) -> Array:
        """Physics Block with a given correction: `F(u, D_θ(u + c))`."""
        return self.physics(u, self.filters(u + c))

    def micro_correction(self, u: Array) -> Array:
        """MiNN(u), added after each micro step; zeros when there is no MiNN."""
        return jnp.zeros_like(u) if self.micro_net is None else self.micro_net(u)

    def macro_correction(self, u: Array) -> Array:
        """MaNN(u), added after each macro step; zeros when there is no MaNN."""
        return jnp.zeros_like(u) if self.macro_net is None else self.macro_net(u)

    def __call__(self, u: Array) -> dict[str, Array]:
        """Every learned map at `u`, so that `model.init(key, u)` builds all parameters."""
        return {"rhs": self.rhs(u), "micro": self.micro_correction(u), "macro": self.macro_correction(u)}


def _vector_field(model: MultiPDENet) -> Callable[[Any, Array, Any], Array]:
    """`f(t, u, params)` for `make_stepper`: the Physics Block with parameters as `args`."""

    def f(t: Any, u: Array, params: Any) -> Array:
        del t  # the systems are autonomous
        return model.apply(params, u, method=MultiPDENet.rhs)

    return f


def _held_correction_field(model: MultiPDENet) -> Callable[[Any, Array, Any], Array]:
    """`f(t, u, (params, c))`: the Physics Block with a correction `c` held over the step."""

    def f(t: Any, u: Array, args: tuple[Any, Array]) -> Array:
        del t
        params, c = args
        return model.apply(params, u, c, method=MultiPDENet.rhs_corrected_by)

    return f


def micro_step(model: MultiPDENet, params: Any, u: Array, correction: Array | None = None) -> Array:
    """`u + ∫_δt F dτ + δt·MiNN(u)` (Eq. 3) with one RK4 (or Euler) step of δt = ΔT / M.

    `u`: `(..., *spatial, C)`; returns the same shape. With `corrector_every` "micro",
    Corr(u) is evaluated here once and held over the stages; with "macro" the caller
    passes the macro step's `correction`.
    """
    dt = model.macro_dt / model.n_micro
    if model.corrector is None or model.corrector_every == "stage":
        u_next = make_stepper(_vector_field(model), model.integrator)(u, 0.0, dt, params)
    else:
        if correction is None:
            if model.corrector_every == "macro":
                raise ValueError("corrector_every='macro' needs the macro step's correction")
            correction = model.apply(params, u, method=MultiPDENet.correction)
        step = make_stepper(_held_correction_field(model), model.integrator)
        u_next = step(u, 0.0, dt, (params, correction))
    if model.micro_net is not None:
        dt = model.macro_dt / model.n_micro
        u_next = u_next + dt * model.apply(params, u, method=MultiPDENet.micro_correction)
    return u_next


def macro_step(model: MultiPDENet, params: Any, u: Array) -> Array:
    """M checkpointed micro steps, then `+ ΔT·MaNN`: `u_k (..., *spatial, C)` -> `u_{k+1}`.

    With `corrector_every="macro"`, Corr(u_k) is evaluated once here for all micro steps.
    """
    c = None
    if model.corrector is not None and model.corrector_every == "macro":
        c = model.apply(params, u, method=MultiPDENet.correction)
    body = jax.checkpoint(lambda v, p, c_: micro_step(model, p, v, c_))
    u, _ = jax.lax.scan(lambda v, _: (body(v, params, c), None), u, None, length=model.n_micro)
    if model.macro_net is not None:
        u = u + model.macro_dt * model.apply(params, u, method=MultiPDENet.macro_correction)
    return u


def rollout(model: MultiPDENet, params: Any, u0: Array, n_macro_steps: int,
            remat: bool = False) -> Array:
    """Autoregressive rollout: `u0 (..., *spatial, C)` -> `(n_macro_steps, ..., *spatial, C)`.

    Frame k is the state at time `(k + 1) ΔT`; the initial condition is not included.
    `jax.vmap` it over trajectories for `(B, T, ...)` as `metrics.evaluate_rollouts` takes.
    `remat`: recompute each macro step's activations in the backward pass (`jax.checkpoint`),
    so the memory of a differentiated rollout grows with the states, not the activations.
    """
    step = lambda p, u: macro_step(model, p, u)
    step = jax.checkpoint(step) if remat else step

    def body(u: Array, _: None) -> tuple[Array, Array]:
        u = step(params, u)
        return u, u

    _, trajectory = jax.lax.scan(body, u0, None, length=n_macro_steps)
    return trajectory


def _make_net(role: str, spec: Mapping[str, Any] | None, system: System) -> nn.Module | None:
    """Build a correction network from `{"arch": "fno" | "unet", **constructor kwargs}`."""
    if spec is None:
        return None
    kwargs = {"zero_init_output": True, **spec}
    arch = kwargs.pop("arch", None)
    if arch not in NETS:
        raise ValueError(f"{role}.arch = {arch!r}; allowed: {sorted(NETS)}")
    if arch == "fno":
        kwargs["spatial_dims"] = system.spatial_dims
    elif system.spatial_dims != 2:
        raise ValueError(f"{role}.arch = 'unet' needs a 2-D system; use 'fno' for 1-D")
    try:
        return NETS[arch](out_channels=system.channels, **kwargs)
    except TypeError as err:
        raise ValueError(f"{role}: bad settings {dict(spec)!r} for {arch}: {err}") from err


def make_model(
    system: str,
    h: float,
    macro_dt: float,
    *,
    n_micro: int = 4,
    integrator: str = "rk4",
    coefficients: Mapping[str, float] | None = None,
    filter_mode: str = "symmetric",
    filter_layout: str = "sum_rules",
    corrector: Mapping[str, Any] | None = DEFAULT_NET,
    micro_net: Mapping[str, Any] | None = DEFAULT_NET,
    macro_net: Mapping[str, Any] | None = DEFAULT_NET,
    corrector_every: str = "stage",
    stencil_impl: str = "shifted",
    fused_laplacian: bool = True,
) -> MultiPDENet:
    """MultiPDENet for one of `SYSTEMS`, with every setting checked before any compute.

    Args:
      system: "burgers", "gray_scott", "kdv" or "navier_stokes".
      h: grid spacing of the coarse grid.
      macro_dt: ΔT.
      n_micro: M >= 1.
      integrator: "rk4" or "euler".
      coefficients: keyword arguments of the system's right-hand side in `physics.py`
        (e.g. `{"viscosity": 1e-3}`); missing ones take that function's defaults.
      filter_mode, filter_layout: see `DerivativeFilters2D` (1-D systems ignore the layout).
      corrector, micro_net, macro_net: `{"arch": "fno" | "unet", **kwargs}` for FNO/UNet
        (out_channels and spatial_dims are filled in; `zero_init_output` defaults to True),
        or None to drop that network.
      corrector_every: "stage", "micro" or "macro" (`CORRECTOR_EVERY`; see `MultiPDENet`).
      stencil_impl: "shifted" or "conv" (`filters.STENCIL_IMPLS`; equal to float rounding).
      fused_laplacian: 2-D systems take the Laplacian from one kernel `K₂ + K₂ᵀ`
        (`DerivativeFilters2D(laplacian=True)`); False: as `xx + yy` (equal to float rounding).
    """
    if system not in SYSTEMS:
        raise ValueError(f"system = {system!r}; allowed: {sorted(SYSTEMS)}")
    if not isinstance(n_micro, int) or n_micro < 1:
        raise ValueError(f"n_micro = {n_micro!r} must be an int >= 1")
    if integrator not in SOLVERS:
        raise ValueError(f"integrator = {integrator!r}; allowed: {sorted(SOLVERS)}")
    if corrector_every not in CORRECTOR_EVERY:
        raise ValueError(f"corrector_every = {corrector_every!r}; allowed: {CORRECTOR_EVERY}")
    if stencil_impl not in STENCIL_IMPLS:
        raise ValueError(f"stencil_impl = {stencil_impl!r}; allowed: {STENCIL_IMPLS}")
    for name, value in (("h", h), ("macro_dt", macro_dt)):
        if not value > 0:
            raise ValueError(f"{name} = {value!r} must be > 0")
    spec = SYSTEMS[system]
    coefficients = dict(coefficients or {})
    if "h" in inspect.signature(spec.rhs).parameters:
        coefficients["h"] = h
    try:
        inspect.signature(spec.rhs).bind_partial(None, None, **coefficients)
    except TypeError as err:
        raise ValueError(f"coefficients {coefficients!r} do not fit {spec.rhs.__name__}: {err}") from err
    filters = (
        DerivativeFilters2D(h=h, mode=filter_mode, layout=filter_layout, impl=stencil_impl,
                            laplacian=fused_laplacian)
        if spec.spatial_dims == 2
        else DerivativeFilters1D(h=h, mode=filter_mode, impl=stencil_impl)
    )
    return MultiPDENet(
        physics=functools.partial(spec.rhs, **coefficients),
        filters=filters,
        macro_dt=macro_dt,
        n_micro=n_micro,
        integrator=integrator,
        corrector=_make_net("corrector", corrector, spec),
        micro_net=_make_net("micro_net", micro_net, spec),
        macro_net=_make_net("macro_net", macro_net, spec),
        corrector_every=corrector_every,
    )
