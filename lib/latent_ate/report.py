"""Monte Carlo summaries, the targets, the results tables (`render`: the README block of
tools/results.py --paper=latent_ate) and the two figures.

summarize: over R replications of (θ̂_r, se_r) against the true θ —
  bias = mean θ̂ − θ, its Monte Carlo s.e. sd(θ̂)/√R, RMSE, coverage of θ̂ ± z·se,
  mean interval width 2z·se, |bias| / mean half-width, sd(θ̂) against mean se.
"""
from __future__ import annotations

import os

import numpy as np
from scipy import stats

from lib.common import workdir as wd
from lib.common.report import read_results, target, verdict


def summarize(thetas, ses, truth: float, level: float = 0.95) -> dict:
    """Monte Carlo metrics of one estimator (see module doc); se may be all-NaN (no CI)."""
    thetas, ses = np.asarray(thetas, np.float64), np.asarray(ses, np.float64)
    r = thetas.shape[0]
    z = stats.norm.ppf(0.5 + level / 2)
    bias = float(thetas.mean() - truth)
    out = {"reps": r, "mean": float(thetas.mean()), "bias": bias,
           "bias_mc_se": float(thetas.std(ddof=1) / np.sqrt(r)),
           "rmse": float(np.sqrt(((thetas - truth) ** 2).mean())),
           "sd": float(thetas.std(ddof=1)), "finite": int(np.isfinite(thetas).sum())}
    if np.all(np.isfinite(ses)):
        half = z * ses
        out.update({"coverage": float(np.mean(np.abs(thetas - truth) <= half)),
                    "mean_se": float(ses.mean()), "mean_width": float(2 * half.mean()),
                    "bias_over_half_width": float(abs(bias) / half.mean())})
    else:
        out.update({"coverage": None, "mean_se": None, "mean_width": None,
                    "bias_over_half_width": None})
    return out


def summarize_rmse(rmse: dict) -> dict:
    """{nuisance: {"mean", "sd"} over replications} of the per-replication RMSEs (R,)
    against the true nuisance; nuisances that are NaN (absent) are left out."""
    out = {}
    for k, v in rmse.items():
        v = np.asarray(v, np.float64)
        if np.all(np.isfinite(v)):
            out[k] = {"mean": float(v.mean()), "sd": float(v.std(ddof=1))}
    return out


def visibly_biased(s: dict) -> bool:
    """|bias| above 3 Monte Carlo standard errors and above a quarter of the half-width."""
    half = s["mean_width"] / 2 if s["mean_width"] else 0.0
    return abs(s["bias"]) > 3 * s["bias_mc_se"] and abs(s["bias"]) > 0.25 * half


def targets(results: dict, config) -> dict:
    """The targets per setting: the target estimators' coverage and bias, and
    naive / raw-pixel DML visibly biased. Each entry {met: bool, ...numbers}."""
    lo, hi = (v / 100 for v in config.eval.target_coverage)
    frac = config.eval.target_bias_fraction
    out = {}
    for setting, block in results["settings"].items():
        est = block["estimators"]
        for name in config.eval.target_estimators:
            s = est[name]
            out[f"{setting}/{name}/coverage"] = target(
                lo <= s["coverage"] <= hi, value=s["coverage"], range=[lo, hi])
            out[f"{setting}/{name}/bias"] = target(
                s["bias_over_half_width"] < frac, bias=s["bias"], bias_mc_se=s["bias_mc_se"],
                half_width=s["mean_width"] / 2, ratio=s["bias_over_half_width"], limit=frac)
        for name in ("naive", "dml_linear_pixels"):
            if name in est:
                out[f"{setting}/{name}/visibly_biased"] = target(
                    visibly_biased(est[name]), bias=est[name]["bias"],
                    bias_mc_se=est[name]["bias_mc_se"], half_width=est[name]["mean_width"] / 2)
    return out


def _f(v, fmt=".3f"):
    return "—" if v is None else format(v, fmt)


SET_ORDER = ("pixels", "cnn", "pixel_ae", "confounder_code")


def tables(results: dict, order=None, features: bool = True) -> str:
    """Markdown: one table per setting (estimators in `order`, default as stored), and
    (if `features`) the adjustment-set / intrinsic-dimension table."""
    parts = []
    for setting in [s for s in ("label", "complex") if s in results["settings"]]:
        block = results["settings"][setting]
        parts.append(f"**{setting} confounding** (true ATE {block['truth']}, n = {block['n']}, "
                     f"{block['reps']} replications; naive population limit "
                     f"{_f(block.get('naive_limit'))})\n")
        parts.append("| estimator | adjustment set | mean θ̂ | bias (± MC s.e.) | RMSE | "
                     "coverage | CI width | \\|bias\\|/half-width | sd θ̂ / mean se | s |")
        parts.append("|---|---|---|---|---|---|---|---|---|---|")
        names = [n for n in (order or block["estimators"]) if n in block["estimators"]]
        for name in names:
            s = block["estimators"][name]
            ratio = None if s["mean_se"] is None else s["sd"] / s["mean_se"]
            cov = "—" if s["coverage"] is None else f"{100 * s['coverage']:.1f}%"
            parts.append(f"| {name} | {s['adjust']} | {s['mean']:.3f} | {s['bias']:+.3f} ± "
                         f"{s['bias_mc_se']:.3f} | {s['rmse']:.3f} | {cov} | "
                         f"{_f(s['mean_width'])} | {_f(s['bias_over_half_width'], '.2f')} | "
                         f"{_f(ratio, '.2f')} | {s['seconds']:.0f} |")
        parts.append("")
    rmse_part = rmse_table(results, order)
    if rmse_part:
        parts += [rmse_part, ""]
    if not features:
        return "\n".join(parts).rstrip()
    f = results["features"]
    parts.append(f"**Adjustment sets** (causal pool of {f['pool_size']} images; pre-trained "
                 f"CNN accuracy on the pool {100 * f['cnn_pool_accuracy']:.1f}% (10 classes), "
                 f"{100 * f['label_accuracy']:.1f}% on the binary label)\n")
    parts.append("| set | ambient dim | TwoNN | MLE (k) |")
    parts.append("|---|---|---|---|")
    for name in [n for n in SET_ORDER if n in f["intrinsic_dim"]]:
        d = f["intrinsic_dim"][name]
        parts.append(f"| {name} | {d['ambient']} | {d['two_nn']:.1f} | {d['mle']:.1f} "
                     f"({d['k']}) |")
    return "\n".join(parts)


RMSE_COLUMNS = (("ml_l", "l = E[Y ∣ Z]"), ("ml_m", "m = P(D = 1 ∣ Z)"),
                ("ml_g", "g (IV-type)"), ("ml_g0", "g0 (IRM)"), ("ml_g1", "g1 (IRM)"))


def rmse_table(results: dict, order=None) -> str:
    """Markdown: per setting and DML estimator, the mean (over replications) RMSE of each
    cross-fitted nuisance against the true one; '' when no run recorded any."""
    rows, used = [], set()
    for setting in [s for s in ("label", "complex") if s in results["settings"]]:
        est = results["settings"][setting]["estimators"]
        for name in [n for n in (order or est) if n in est]:
            r = est[name].get("nuisance_rmse") or {}
            if r:
                rows.append((setting, name, r))
                used |= set(r)
    if not rows:
        return ""
    cols = [(k, title) for k, title in RMSE_COLUMNS if k in used]
    lines = ["**Nuisance RMSE against the true nuisances** (mean over replications of the "
             "cross-fitted predictions' RMSE; diagnostic only, never used in fitting)\n",
             "| setting | estimator | " + " | ".join(t for _, t in cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    for setting, name, r in rows:
        cells = [_f(r[k]["mean"]) if k in r else "—" for k, _ in cols]
        lines.append(f"| {setting} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def target_lines(targets: dict) -> str:
    """Each target as a row: MET / MISSED and its numbers."""
    lines = ["| target | status | numbers |", "|---|---|---|"]
    for name, t in targets.items():
        nums = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                         for k, v in t.items() if k != "met")
        lines.append(f"| {name} | {verdict(t)} | {nums} |")
    return "\n".join(lines)


def doubleml_table(rows) -> str:
    """Rows of tools/latent_ate_vs_doubleml.py's comparison as a markdown table."""
    lines = ["| case | n_rep | θ̂ ours | θ̂ DoubleML | rel. diff | se ours | se DoubleML "
             "| rel. diff |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['n_rep']} | {r['theta_ours']:.8f} | "
                     f"{r['theta_doubleml']:.8f} | {r['rel_theta']:.1e} | {r['se_ours']:.8f} | "
                     f"{r['se_doubleml']:.8f} | {r['rel_se']:.1e} |")
    return "\n".join(lines)


def doubleml_lines(data: dict) -> str:
    """The agreement paragraph and table from the JSON of latent_ate_vs_doubleml.py --out."""
    status = verdict(data["worst"] <= data["tol"])
    return (f"**Agreement with DoubleML** (same folds, same linear learners, float64): "
            f"largest relative difference {data['worst']:.1e} (target {data['tol']:g}: "
            f"{status})\n\n{doubleml_table(data['rows'])}")


def merge(results: list[dict]) -> dict:
    """The results of several runs (one per setting group) as one; `wall_s` becomes the
    list of their wall times. ValueError when a setting appears in more than one run."""
    merged = None
    for res in results:
        if merged is None:
            merged = dict(res, wall_s=[res["wall_s"]])
            continue
        overlap = set(merged["settings"]) & set(res["settings"])
        if overlap:
            raise ValueError(f"settings {sorted(overlap)} appear in more than one workdir")
        merged["settings"].update(res["settings"])
        merged["targets"].update(res["targets"])
        merged["wall_s"].append(res["wall_s"])
    return merged


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion k / n."""
    a = 1 - level
    lo = float(stats.beta.ppf(a / 2, k, n - k + 1)) if k > 0 else 0.0
    hi = float(stats.beta.ppf(1 - a / 2, k + 1, n - k)) if k < n else 1.0
    return lo, hi


def binomial_lines(results: dict, names, nominal: float = 0.95) -> str:
    """Per setting and estimator in `names` (those with intervals): coverage k/R, its 95 %
    Clopper–Pearson interval and whether the nominal level lies inside it (consistent)."""
    lines = ["| setting | estimator | covered / R | 95 % interval | nominal inside |",
             "|---|---|---|---|---|"]
    for setting, block in results["settings"].items():
        for name in names:
            s = block["estimators"].get(name)
            if not s or s.get("coverage") is None:
                continue
            k, r = round(s["coverage"] * s["reps"]), s["reps"]
            lo, hi = clopper_pearson(k, r)
            lines.append(f"| {setting} | {name} | {k} / {r} | {100 * lo:.1f}–{100 * hi:.1f}% "
                         f"| {'yes' if lo <= nominal <= hi else 'NO'} |")
    return "\n".join(lines)


def render(results: dict, config: dict, more: tuple = (), features: bool = True,
           doubleml: dict | None = None) -> str:
    """The README block: tables (merged with the `more` runs' results), targets, the run
    line and, with `doubleml` (the comparison's JSON), the agreement table."""
    results = merge([results, *more])
    walls = " + ".join(f"{w:.0f}" for w in results["wall_s"])
    text = (f"{tables(results, config['estimators'], features)}\n\n**Targets**\n\n"
            f"{target_lines(results['targets'])}\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']}, wall time "
            f"{walls} s ({1 + len(more)} run(s); pre-training "
            f"{results['features']['pretrain_seconds']:.0f} s in the first, 0 when its "
            "checkpoints and feature cache were reused; s = seconds per estimator for all "
            "replications).")
    if config.get("tag") == "latent_ate_official":
        text += ("\n\n**Coverage against its binomial interval** (the official set-up's "
                 "target: 95 % inside the exact 95 % interval of the observed coverage)\n\n"
                 + binomial_lines(results, config["eval"]["target_estimators"]))
    if doubleml is not None:
        text += "\n\n" + doubleml_lines(doubleml)
    return text


RESULTS_FLAGS = {
    "more_workdirs": ("string", "", "Further run directories, comma-separated, merged with "
                      "--workdir (their settings must not overlap)."),
    "features": ("bool", True, "Include the adjustment-set table."),
    "doubleml": ("string", None, "JSON written by tools/latent_ate_vs_doubleml.py --out.")}


def results_block(results: dict, config: dict, workdir: str, more_workdirs: str,
                  features: bool, doubleml: str | None) -> str:
    """`render` of the run merged with those of `more_workdirs` (comma-separated), with the
    agreement table of the `doubleml` JSON file when given."""
    more = tuple(read_results(w, "latent_ate") for w in more_workdirs.split(",") if w)
    return render(results, config, more, features, wd.read_json(doubleml) if doubleml else None)


def plot_intervals(path: str, block: dict, truth: float, reps: int, title: str) -> None:
    """Per estimator, the first `reps` replications' θ̂ with their 95% intervals."""
    import matplotlib.pyplot as plt
    names = list(block)
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(names)), 4.5))
    for i, name in enumerate(names):
        th = np.asarray(block[name]["thetas"][:reps])
        se = np.asarray(block[name]["ses"][:reps], dtype=np.float64)
        xs = i + np.linspace(-0.35, 0.35, th.shape[0])
        err = 1.96 * se if np.all(np.isfinite(se)) else None
        ax.errorbar(xs, th, yerr=err, fmt="o", ms=2, lw=0.6, alpha=0.8)
    ax.axhline(truth, color="k", lw=1, ls="--", label=f"true ATE {truth}")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("θ̂ ± 1.96 se")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_z_hist(path: str, block: dict, truth: float, names, title: str) -> None:
    """Histograms of (θ̂ − θ)/se against the N(0, 1) density (the paper's normality figure)."""
    import matplotlib.pyplot as plt
    names = [n for n in names if n in block]
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), squeeze=False)
    grid = np.linspace(-4, 4, 200)
    for ax, name in zip(axes[0], names):
        z = (np.asarray(block[name]["thetas"]) - truth) / np.asarray(block[name]["ses"])
        ax.hist(np.clip(z, -8, 8), bins=30, density=True, alpha=0.6)
        ax.plot(grid, stats.norm.pdf(grid), "k-", lw=1)
        ax.set_title(name, fontsize=9)
        ax.set_xlim(-8, 8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
