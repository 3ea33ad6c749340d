"""Figures of the experiment (PNG, matplotlib Agg).

`lib.toolbox.plotting.line_plot` has no log x axis and no error bars, which every figure
here needs (log-log rates, slopes with intervals); these helpers draw from the
`results.json` dicts written by `experiments/adam_abc/train.py`.
"""
from __future__ import annotations

import os

import numpy as np

from lib.toolbox import plotting


def rate_figure(path: str, setting: str, runs: dict, theory_slope: float) -> str:
    """avg_t and min_t of E‖∇f(θ_t)‖² against T (log-log), one colour per method;
    `runs` = {method: rate summary}."""
    plt = plotting.pyplot()
    from matplotlib.ticker import NullFormatter
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, stat, label in ((axes[0], "avg", "(1/T) Σ_t E‖∇f(θ_t)‖²"),
                            (axes[1], "min", "min_t E‖∇f(θ_t)‖²")):
        for i, (method, s) in enumerate(runs.items()):
            t, y = np.asarray(s["horizons"], float), np.asarray(s[stat], float)
            ax.plot(t, y, "o-", color=f"C{i}", label=f"{method}: slope {s[f'slope_{stat}']:.3f}")
        ref = next(iter(runs.values()))
        t = np.asarray(ref["horizons"], float)
        ax.plot(t, ref[stat][0] * (t / t[0]) ** theory_slope, "k--", linewidth=1,
                label=f"T^{theory_slope:g}")
        ax.set(xscale="log", yscale="log", xlabel="horizon T", ylabel=label)
        ax.set_xticks(t, [str(int(v)) for v in t])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(f"{setting}: α = α̂/√T, β2 = 1 − c/T (controls: see legend)")
    return plotting.save(fig, path)


def slopes_figure(path: str, runs: dict, theory_slope: float, tolerance: float) -> str:
    """Every run's slope (avg and min) with its 95% bootstrap interval, and the target band."""
    plt = plotting.pyplot()
    names = list(runs)
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(names)), 4.5))
    x = np.arange(len(names))
    for dx, stat, colour in ((-0.15, "avg", "C0"), (0.15, "min", "C1")):
        y = np.array([runs[n][f"slope_{stat}"] for n in names])
        ci = np.array([runs[n][f"slope_{stat}_ci"] for n in names])
        ax.errorbar(x + dx, y, yerr=[y - ci[:, 0], ci[:, 1] - y], fmt="o", color=colour,
                    capsize=3, label=f"slope of {stat}_t E‖∇f‖² vs T")
    ax.axhspan(theory_slope - tolerance, theory_slope + tolerance, color="green", alpha=0.15,
               label=f"theory {theory_slope:g} ± {tolerance:g}")
    ax.axhline(0.0, color="gray", linewidth=0.8)
    ax.set_xticks(x, names, rotation=70, ha="right", fontsize=7)
    ax.set(ylabel="log-log slope")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return plotting.save(fig, path)


def asymptotic_figure(path: str, setting: str, runs: dict) -> str:
    """L1 curve, fraction below δ and tail-supremum quantiles against t; `runs` =
    {method: asymptotic summary}."""
    plt = plotting.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for i, (method, s) in enumerate(runs.items()):
        t = np.asarray(s["times"], float)
        pos = t > 0
        axes[0].plot(t[pos], np.asarray(s["l1"])[pos], color=f"C{i}",
                     label=f"{method}: late slope {s['late_slope']:.2f}")
        axes[1].plot(t[pos], np.asarray(s["frac_below"])[pos], color=f"C{i}", label=method)
        axes[2].plot(t[pos], np.asarray(s["tail_quantiles"]["0.5"])[pos], color=f"C{i}",
                     label=f"{method}: median")
        axes[2].plot(t[pos], np.asarray(s["tail_quantiles"]["1.0"])[pos], color=f"C{i}",
                     linestyle=":", label=f"{method}: max over runs")
    delta = next(iter(runs.values()))["threshold"]
    axes[0].set(xscale="log", yscale="log", xlabel="t", ylabel="E‖∇f(θ_t)‖ (L1)")
    axes[1].set(xscale="log", xlabel="t", ylabel=f"P(‖∇f(θ_t)‖ < {delta:g})", ylim=(-0.02, 1.02))
    axes[2].set(xscale="log", yscale="log", xlabel="t", ylabel="sup_{t<=s<=T} ‖∇f(θ_s)‖")
    axes[2].axhline(delta, color="gray", linestyle="--", linewidth=1)
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(f"{setting}: last iterate over {len(runs)} schedule(s)")
    return plotting.save(fig, path)


def _by_setting(runs: dict) -> dict[str, dict]:
    grouped: dict[str, dict] = {}
    for name, summary in runs.items():
        setting, method = name.split("/")
        grouped.setdefault(setting, {})[method] = summary
    return grouped


def write_plots(results: dict, plot_dir: str) -> list[str]:
    """Every figure of `results` into `plot_dir`; the paths written."""
    paths = []
    if "rate" in results:
        rate = results["rate"]
        for setting, runs in _by_setting(rate["runs"]).items():
            paths.append(rate_figure(os.path.join(plot_dir, f"rate_{setting}.png"),
                                           setting, runs, rate["theory_slope"]))
        paths.append(slopes_figure(os.path.join(plot_dir, "rate_slopes.png"),
                                         rate["runs"], rate["theory_slope"], rate["tolerance"]))
    if "asymptotic" in results:
        for setting, runs in _by_setting(results["asymptotic"]["runs"]).items():
            paths.append(asymptotic_figure(
                os.path.join(plot_dir, f"asymptotic_{setting}.png"), setting, runs))
    return paths
