"""Targets (met / missed) and the Markdown tables, from the experiment's results dict.

Targets: every run that meets the theorems' conditions has log-log slopes
(of the time average and of the minimum of E‖∇f(θ_t)‖² against T) within ±tol of the
theory's −1/2; Adam's slopes match SGD's within ±tol on the same setting; ε does not
change the slope; every negative control shows the excluded failure (a rate slope above
−1/2 + tol, or an L1 curve that stops decaying: late slope > −min_decay).
"""
from __future__ import annotations

import math
import os

from lib.adam_abc.plots import write_plots
from lib.adam_abc.settings import CONTROLS
from lib.common.report import met_tree, target


def _kind(run: str) -> str:
    return "control" if run.split("/")[1] in CONTROLS else "theory"


def rate_records(rate: dict) -> dict:
    """The rate targets of the module docstring as target records, with the slopes behind
    each: per theory run and statistic (avg, min) the slope within ±tol of the theory's;
    per setting Adam's slope within ±tol of SGD's and of Adam with the other ε; per control
    the avg slope above theory + tol (the failure shown)."""
    theory, tol = rate["theory_slope"], rate["tolerance"]
    runs = rate["runs"]
    out = {"slope_within_tolerance": {}, "adam_matches_sgd": {}, "eps_does_not_matter": {},
           "control_shows_failure": {}}
    for name, s in runs.items():
        if _kind(name) == "control":
            out["control_shows_failure"][name] = target(
                s["slope_avg"] > theory + tol, slope_avg=s["slope_avg"], theory=theory,
                tolerance=tol)
            continue
        out["slope_within_tolerance"][name] = {
            stat: target(abs(s[f"slope_{stat}"] - theory) <= tol, slope=s[f"slope_{stat}"],
                         theory=theory, tolerance=tol) for stat in ("avg", "min")}
    for name, s in runs.items():
        setting, method = name.split("/")
        ref = {"adam": "sgd", "adam_eps": "adam"}.get(method)   # Adam vs SGD; ε vs Adam
        other = runs.get(f"{setting}/{ref}")
        if ref is not None and other is not None:
            key = "adam_matches_sgd" if ref == "sgd" else "eps_does_not_matter"
            out[key][setting] = {
                stat: target(abs(s[f"slope_{stat}"] - other[f"slope_{stat}"]) <= tol,
                             **{method: s[f"slope_{stat}"], ref: other[f"slope_{stat}"]},
                             tolerance=tol) for stat in ("avg", "min")}
    return out


def asymptotic_records(asym: dict) -> dict:
    """The last-iterate targets as target records: a theory run's late slope at most
    −min_decay (it converges); a control's above it (the failure shown)."""
    out = {"theory_runs_converge": {}, "control_shows_failure": {}}
    for name, s in asym["runs"].items():
        decays = bool(s["late_slope"] <= -asym["min_decay"])
        control = _kind(name) == "control"
        out["control_shows_failure" if control else "theory_runs_converge"][name] = target(
            not decays if control else decays, late_slope=s["late_slope"],
            min_decay=asym["min_decay"])
    return out


def targets(results: dict) -> dict:
    """The targets tree of results.json: `rate_records` and `asymptotic_records` of the
    parts that ran."""
    parts = {"rate": rate_records, "asymptotic": asymptotic_records}
    return {part: records(results[part]) for part, records in parts.items() if part in results}


def rate_targets(rate: dict) -> dict:
    """`rate_records` as bare bools (the tables' verdicts)."""
    return met_tree(rate_records(rate))


def asymptotic_targets(asym: dict) -> dict:
    """`asymptotic_records` as bare bools (the tables' verdicts)."""
    return met_tree(asymptotic_records(asym))


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:.{digits}g}" if abs(x) < 1e-2 or abs(x) >= 1e4 else f"{x:.{digits}f}"


def _ci(s: dict, stat: str) -> str:
    lo, hi = s[f"slope_{stat}_ci"]
    return f"{s[f'slope_{stat}']:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _yes(flag) -> str:
    if isinstance(flag, dict):
        return ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in flag.items())
    return "yes" if flag else "NO"


def _ordered(runs: dict) -> list:
    """Runs meeting the conditions first, then the controls; by name within each."""
    return sorted(runs.items(), key=lambda kv: (_kind(kv[0]) == "control", kv[0]))


def rate_table(rate: dict) -> str:
    t = rate_targets(rate)
    lines = [
        f"Rate: slopes of (1/T)Σ_t E‖∇f(θ_t)‖² (avg) and min_t E‖∇f(θ_t)‖² (min) against T = "
        f"{rate['horizons'][0]}..{rate['horizons'][-1]}, {rate['num_runs']} runs per point, "
        f"95% bootstrap intervals; theory {rate['theory_slope']:+g} ± {rate['tolerance']:g}.",
        "",
        "| run | kind | oracle (A, B, C) | avg at T min → max | slope avg | slope min | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in _ordered(rate["runs"]):
        kind = _kind(name)
        if kind == "control":
            verdict = "failure shown: " + _yes(t["control_shows_failure"][name])
        else:
            verdict = "within: " + _yes(t["slope_within_tolerance"][name])
        abc = s["abc"]
        lines.append(
            f"| {name} | {kind} | {s['oracle']} ({_fmt(abc['A'])}, {_fmt(abc['B'])}, "
            f"{_fmt(abc['C'])}) | {_fmt(s['avg'][0])} → {_fmt(s['avg'][-1])} | {_ci(s, 'avg')} "
            f"| {_ci(s, 'min')} | {verdict} |")
    if t["adam_matches_sgd"] or t["eps_does_not_matter"]:
        lines += ["", "| setting | comparison | Δ slope avg | Δ slope min | within ±"
                  f"{rate['tolerance']:g} |", "|---|---|---|---|---|"]
        for key, other, label in (("adam_matches_sgd", "sgd", "Adam − SGD"),
                                  ("eps_does_not_matter", "adam_eps", "Adam(ε) − Adam(ε_alt)")):
            for setting, flags in t[key].items():
                a, b = rate["runs"][f"{setting}/adam"], rate["runs"][f"{setting}/{other}"]
                lines.append(f"| {setting} | {label} | {a['slope_avg'] - b['slope_avg']:+.3f} | "
                             f"{a['slope_min'] - b['slope_min']:+.3f} | {_yes(flags)} |")
    return "\n".join(lines)


def _at(s: dict, frac: float, key: str = "l1") -> float:
    times = s["times"]
    target = frac * times[-1]
    i = min(range(len(times)), key=lambda j: abs(times[j] - target))
    return s[key][i] if key != "tail" else s["tail_quantiles"]["0.5"][i]


def asymptotic_table(asym: dict) -> str:
    t = asymptotic_targets(asym)
    n = asym["num_steps"]
    lines = [
        f"Last iterate: α_t = {asym['alpha0']:g}/(t + {asym['offset']:g})^{asym['power']:g}, "
        f"1 − β2,t = {asym['beta2_c']:g}/(t + {asym['offset']:g})^{asym['beta2_power']:g} "
        f"unless the run says otherwise; {asym['num_runs']} runs, T = {n}, δ = "
        f"{asym['threshold']:g}; late slope = log-log slope of E‖∇f(θ_t)‖ over t >= "
        f"{asym['late_from']:g}T (derived expectation for a quadratic: −p/2 = "
        f"{-asym['power'] / 2:+.2f}).",
        "",
        "| run | kind | E‖∇f‖ at T/100, T/10, T | late slope | P(‖∇f(θ_T)‖ < δ) | "
        "median sup_{s>=t}‖∇f(θ_s)‖ at t = T/100, T/10 | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in _ordered(asym["runs"]):
        kind = _kind(name)
        verdict = (("failure shown: " + _yes(t["control_shows_failure"][name])) if kind == "control"
                   else ("converges: " + _yes(t["theory_runs_converge"][name])))
        l1 = ", ".join(_fmt(_at(s, f)) for f in (0.01, 0.1, 1.0))
        tail = " → ".join(_fmt(_at(s, f, "tail")) for f in (0.01, 0.1))
        lines.append(f"| {name} | {kind} | {l1} | {s['late_slope']:+.3f} | "
                     f"{s['frac_below'][-1]:.3f} | {tail} | {verdict} |")
    return "\n".join(lines)


def tables(results: dict) -> str:
    """All tables of a results dict (the parts that ran), as Markdown."""
    parts = []
    if "rate" in results:
        parts.append(rate_table(results["rate"]))
    if "asymptotic" in results:
        parts.append(asymptotic_table(results["asymptotic"]))
    return "\n\n".join(parts)


def verdicts(results: dict) -> list[str]:
    """One line per target group: how many checks were met."""
    lines = []
    for part, groups in met_tree(results.get("targets", {})).items():   # records or old bools
        for group, checks in groups.items():
            flags_ = [v for c in checks.values() for v in (c.values() if isinstance(c, dict) else [c])]
            lines.append(f"{part}.{group}: {sum(flags_)}/{len(flags_)} met")
    return lines


def render(results: dict, config: dict) -> str:
    """The README block of `tools/results.py --paper=adam_abc`: the tables and one verdict
    per group."""
    del config
    return f"{tables(results)}\n\n" + "\n".join(verdicts(results))


RESULTS_FLAGS = {"plots": ("bool", False, "Also redraw every figure into <workdir>/plots.")}


def results_block(results: dict, config: dict, workdir: str, plots: bool) -> str:
    """`render`, with `plots` first redrawing every figure into `<workdir>/plots`."""
    if plots:
        for path in write_plots(results, os.path.join(workdir, "plots")):
            print("wrote", path)
    return render(results, config)
