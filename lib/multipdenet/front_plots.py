"""Figures of the cost–accuracy front and of the statistics front (matplotlib, Agg)."""
from __future__ import annotations

import math

import numpy as np

from lib.multipdenet import classical, front


def readable_log_x(ax, ticks: int = 4) -> None:
    """A log x axis that spans less than a decade gets `ticks` labelled ticks evenly spaced in
    log, each to 3 significant figures, and no minor labels (matplotlib labels every minor
    tick there, and on a narrow span they overlap)."""
    from matplotlib.ticker import NullFormatter  # noqa: PLC0415
    lo, hi = ax.get_xlim()
    if hi / lo >= 10:
        return
    values = np.geomspace(lo, hi, ticks + 2)[1:-1]
    ax.set_xticks(values, [f"{v:.3g}" for v in values])
    ax.xaxis.set_minor_formatter(NullFormatter())


def front_figure(result: dict):
    """The front as a line; every classical point (a family per colour, one grid's step sweep
    joined by a dotted line, the default step labelled with its grid); every learned point
    with its spread over ICs, each its own colour and marker; for a velocity system a second
    panel in velocity RMSE."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    spec = front.system(result.get("system", "navier_stokes"))
    panels = [("hct", "front", f"HCT on {spec['accuracy']} (mean ± std over ICs)")]
    if "front_rmse" in result:
        panels.append(("rmse", "front_rmse", "velocity RMSE over the horizon (mean; learned: min-max over ICs)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(8.5 * len(panels), 5.5), squeeze=False)
    families = {f: (label, marker) for f, label, marker in classical.FAMILIES[result.get("system", "navier_stokes")]}
    learned = [p for p in result["points"] if p["family"] == "learned"]
    # 10 colours × 12 markers: no two of the first 60 learned points look alike
    styles = [(f"C{i % 10}", "*PDXhvp<>d^s"[i % 12]) for i in range(len(learned))]
    for ax, (key, front_key, ylabel) in zip(axes[0], panels):
        f = result[front_key]
        ax.plot([p["cost"] for p in f], [p[key] for p in f], "k-", lw=1.5, label="classical front")
        for i, family in enumerate(sorted({p["family"] for p in result["points"]} - {"learned", "dns"})):
            label, marker = families.get(family, (family, "o"))
            pts = [p for p in result["points"] if p["family"] == family and math.isfinite(p.get(key, math.nan))]
            colour = ("0.35", "0.6", "tab:olive", "tab:cyan")[i % 4]
            blown = [p for p in pts if p.get("nonfinite_ics", 0)]   # not on the front: marked x
            ax.plot([p["cost"] for p in blown], [p[key] for p in blown], "x", color=colour, ms=4, alpha=0.5)
            pts = [p for p in pts if not p.get("nonfinite_ics", 0)]
            for n in sorted({p["grid"] for p in pts}):
                sweep = sorted((p for p in pts if p["grid"] == n), key=lambda p: p["cost"])
                ax.plot([p["cost"] for p in sweep], [p[key] for p in sweep], ls=":", lw=0.8, color=colour,
                        marker=marker, ms=4, mfc="none")
                first = max(sweep, key=lambda p: p["cost"])           # the default (smallest) step
                ax.annotate(f"{n}²", (first["cost"], first[key]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points", color=colour)
            ax.plot([], [], ls=":", color=colour, marker=marker, mfc="none",
                    label=f"{label} (grid × step sweep; x: a non-finite IC)")
        top = 1.0  # the RMSE panel's ceiling: a rollout that blows up is drawn there, marked
        for p, (colour, marker) in zip(learned, styles):
            label = f"{p['name']} ({p['grid']}²)"
            if key == "hct":
                ax.errorbar(p["cost"], p[key], yerr=p[f"{key}_std"], fmt=marker, color=colour, ms=9,
                            capsize=3, label=label)
                continue
            per_ic = np.minimum(np.asarray(p["rmse_per_ic"], float), top)  # spread: min to max over ICs
            y = min(p["rmse"], top)
            ax.errorbar(p["cost"], y, yerr=[[y - np.nanmin(per_ic)], [np.nanmax(per_ic) - y]], fmt=marker,
                        color=colour, ms=9, capsize=3, label=label + (" off scale" if p["rmse"] > top else ""))
        ax.set(xscale="log", xlabel="wall s per simulated time unit per trajectory",
               ylabel=ylabel, title=result["title"])
        readable_log_x(ax)
        if key == "rmse":
            ax.set(yscale="log", ylim=(min(p["rmse"] for p in f) / 3, 2 * top))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def stats_figure(stats: dict):
    """Spectrum error against cost (every point, the front, the learned points marked) and
    the spectra of the learned points and the best classical points against the truth's."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 5.5))
    finite = [r for r in stats["points"] if math.isfinite(r["spectrum_error"])]
    for fam in sorted({r["family"] for r in finite} - {"learned"}):
        pts = [r for r in finite if r["family"] == fam]
        ax.plot([r["cost"] for r in pts], [r["spectrum_error"] for r in pts], "o", ms=4, ls="", label=fam)
    for i, r in enumerate(r for r in finite if r["family"] == "learned"):   # each its own legend entry
        ax.plot(r["cost"], r["spectrum_error"], "*PDXhvp<>d^s"[i % 12], color=f"C{i % 10}", ms=9, ls="",
                label=r["name"])
    ax.plot([f["cost"] for f in stats["front"]], [f["spectrum_error"] for f in stats["front"]], "k-",
            label="classical front")
    ax.set(xscale="log", yscale="log", xlabel="wall s per simulated time unit per trajectory",
           ylabel=f"log-spectrum L2 error, k ≤ {stats['k_hi']}", title="statistics front (after the HCT horizon)")
    readable_log_x(ax)
    ax.legend(fontsize=7)
    k = np.arange(1, stats["k_hi"] + 1)
    bx.loglog(k, stats["truth_spectrum"][1:], "k-", lw=2, label="truth 256²")
    show = [r for r in finite if r["family"] == "learned"] + [
        r for r in finite if r["name"] in {f["name"] for f in stats["front"]}][-3:]
    for r in show:
        bx.loglog(k, r["spectrum"][1:], lw=1, label=r["name"])
    bx.set(xlabel="k", ylabel="E(k)", title="time-averaged energy spectra")
    bx.legend(fontsize=7)
    return fig
