"""Input checks shared by the solvers: each raises a `ValueError` that names the quantity,
its value and what is allowed, before any array is computed."""
from __future__ import annotations


def check_positive(name: str, value: float) -> None:
    """ValueError unless `value > 0`."""
    if not value > 0:
        raise ValueError(f"{name} = {value!r} must be > 0")


def check_nonnegative(name: str, value: float) -> None:
    """ValueError unless `value >= 0` (e.g. a viscosity or a drag coefficient)."""
    if not value >= 0:
        raise ValueError(f"{name} = {value!r} must be >= 0")


def check_grid(n: int, minimum: int = 8) -> None:
    """ValueError unless `n` is an even int >= `minimum` (FFT grids with a Nyquist mode)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < minimum or n % 2:
        raise ValueError(f"grid size n = {n!r} must be an even int >= {minimum}")


def check_divisible(n: int, factor: int) -> None:
    """ValueError unless the grid size `n` is divisible by the downsampling `factor` >= 1."""
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
        raise ValueError(f"downsampling factor = {factor!r} must be an int >= 1")
    if n % factor:
        raise ValueError(
            f"grid size {n} is not divisible by the downsampling factor {factor}; "
            f"choose a factor that divides {n}"
        )


def stable_time_step(max_velocity: float, cfl: float, dx: float) -> float:
    """The advective CFL time step `dt = cfl * dx / max_velocity`."""
    check_positive("max_velocity", max_velocity)
    check_positive("cfl", cfl)
    check_positive("dx", dx)
    return cfl * dx / max_velocity


def check_cfl(dt: float, max_velocity: float, dx: float, max_cfl: float) -> None:
    """ValueError unless `0 < dt <= stable_time_step(max_velocity, max_cfl, dx)`."""
    check_positive("dt", dt)
    limit = stable_time_step(max_velocity, max_cfl, dx)
    if dt > limit:
        raise ValueError(
            f"time step dt = {dt:g} is above the CFL limit {limit:g} "
            f"(= max_cfl {max_cfl:g} * dx {dx:g} / max_velocity {max_velocity:g}); "
            f"use dt <= {limit:g}"
        )
