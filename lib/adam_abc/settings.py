"""Named settings and methods of the experiment, built from a config.

A *setting* is `<problem>-<noise>` (e.g. `quadratic-student_t`, `logistic-minibatch`):
one of `problems.PROBLEMS` with one of `oracles.NOISES` (minibatch needs a finite sum).
A *method* is an optimiser with a step-size / β2 schedule:

    adam              the theorems' schedules (rate part: α = α̂/√T, β2 = 1 − c/T;
                      asymptotic part: α_t = α0/(t + t0)^p, β2,t = 1 − c/(t + t0)^r)
    adam_eps          the same with ε = adam.eps_alt (the rate should not depend on 1/ε)
    sgd               α = α̂_sgd/(L√T), or α_t = α0_sgd/(L (t + t0)^p)
    adam_const_alpha  control: α does not shrink (rate: α = α̂/√T_min at every T;
                      asymptotic: α_t = control_alpha, so Σ α_t² = ∞)
    adam_const_beta2  control: β2 = control_beta2 fixed (β2 does not tend to 1)

Controls violate a condition of the theorems (as the notes read them); the others meet it.
"""
from __future__ import annotations

import functools

import ml_collections

from lib.adam_abc import oracles, problems, schedules
from lib.adam_abc.adam import adam
from lib.adam_abc.sgd import sgd

METHODS = ("adam", "adam_eps", "sgd", "adam_const_alpha", "adam_const_beta2")
CONTROLS = ("adam_const_alpha", "adam_const_beta2")


def parse_setting(name: str) -> tuple[str, str]:
    """'<problem>-<noise>' -> (problem, noise); ValueError naming what is allowed."""
    problem, sep, noise = name.partition("-")
    if not sep or problem not in problems.PROBLEMS or noise not in oracles.NOISES:
        raise ValueError(f"setting {name!r} is not '<problem>-<noise>' with problem in "
                         f"{list(problems.PROBLEMS)} and noise in {list(oracles.NOISES)}")
    if noise == "minibatch" and problem not in problems.FINITE_SUMS:
        raise ValueError(f"setting {name!r}: minibatch noise needs a finite sum, one of "
                         f"{list(problems.FINITE_SUMS)}")
    return problem, noise


def parse_run(name: str) -> tuple[str, str]:
    """'<problem>-<noise>/<method>' -> (setting, method)."""
    setting, sep, method = name.partition("/")
    if not sep or method not in METHODS:
        raise ValueError(f"run {name!r} is not '<problem>-<noise>/<method>' with method in "
                         f"{list(METHODS)}")
    parse_setting(setting)
    return setting, method


def build_problem(name: str, p: ml_collections.ConfigDict) -> problems.Problem:
    """The problem `name` with the sizes of the config block `problem`."""
    if name == "quadratic":
        return problems.quadratic(p.dim, p.condition, p.init_distance)
    if name == "nonconvex":
        return problems.nonconvex(p.dim, p.nonconvex_rows, p.nonconvex_lambda, p.label_noise,
                                  p.data_seed, p.init_distance)
    if name == "least_squares":
        return problems.least_squares(p.n, p.dim, p.label_noise, p.data_seed, p.init_distance)
    if name == "logistic":
        return problems.logistic(p.n, p.dim, p.logistic_signal, p.data_seed, p.init_distance)
    raise ValueError(f"unknown problem {name!r}; allowed: {list(problems.PROBLEMS)}")


def build_setting(name: str, config) -> tuple[problems.Problem, oracles.Oracle]:
    """(problem, oracle) of the setting `name`."""
    problem_name, noise = parse_setting(name)
    problem = _cached_problem(problem_name, _freeze(config.problem))
    n = config.noise
    oracle = oracles.make_oracle(problem, noise, sigma=n.sigma, mult=n.mult, df=n.student_df,
                                 skew_p=n.skew_p, batch_size=n.batch_size)
    return problem, oracle


def _freeze(block) -> tuple:
    return tuple(sorted(block.to_dict().items()))


@functools.lru_cache(maxsize=16)
def _cached_problem(name: str, frozen: tuple) -> problems.Problem:
    return build_problem(name, ml_collections.ConfigDict(dict(frozen)))


# ----------------------------------------------------------------------------- rate part


def rate_hparams(method: str, horizon: int, problem: problems.Problem, config) -> dict:
    """Host-checked (α, β2) of `method` at horizon T, as floats."""
    r, a = config.rate, config.adam
    alpha, beta2 = schedules.horizon(r.alpha_hat, horizon, r.beta2_c)
    if method == "sgd":
        return {"alpha": r.sgd_alpha_hat / (problem.smoothness * horizon ** 0.5)}
    if method == "adam_const_alpha":
        alpha = schedules.horizon(r.alpha_hat, min(r.horizons), r.beta2_c)[0]
    if method == "adam_const_beta2":
        schedules.check_unit_interval("rate.control_beta2", r.control_beta2)
        beta2 = r.control_beta2
    schedules.check_unit_interval("b1", a.b1)
    return {"alpha": alpha, "beta2": beta2}


def rate_optimizer(method: str, config):
    """hparams -> optimiser, for `simulate.make_runner` (α, β2 traced, checked on the host)."""
    a = config.adam
    eps = a.eps_alt if method == "adam_eps" else a.eps
    if method == "sgd":
        return lambda h: sgd(h["alpha"])
    return lambda h: adam(h["alpha"], a.b1, h["beta2"], eps, v_init=a.v_init)


# ----------------------------------------------------------------------------- asymptotic part


def asymptotic_optimizer(method: str, problem: problems.Problem, config):
    """The optimiser of `method` with its Robbins–Monro (or control) schedules."""
    s, a = config.asymptotic, config.adam
    if method == "sgd":
        return sgd(schedules.polynomial(s.sgd_alpha0 / problem.smoothness, s.power, s.offset))
    alpha = schedules.polynomial(s.alpha0, s.power, s.offset)
    beta2 = schedules.one_minus_polynomial(s.beta2_c, s.beta2_power, s.offset)
    eps = a.eps_alt if method == "adam_eps" else a.eps
    if method == "adam_const_alpha":
        alpha = s.control_alpha
    if method == "adam_const_beta2":
        beta2 = s.control_beta2
    return adam(alpha, a.b1, beta2, eps, v_init=a.v_init)
