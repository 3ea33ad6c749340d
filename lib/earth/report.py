"""EARTH's targets and tables: `targets` (in results.json), `results_markdown` (the workdir's
results.md), `render` (the README block of `tools/results.py --paper=earth`), the forecast
plots."""
from __future__ import annotations

from lib.common import report
from lib.earth import baselines, model as model_lib
from lib.toolbox import plotting

BASELINES = ("persistence", "linear_ar", "gru", "gcn_gru")
ABLATIONS = ("no_eano", "no_gltg", "no_xattn")


def _all_better(rows: dict, models: list):
    """Target record: EARTH better than each of `models` at every horizon, with the smallest
    margin (other − EARTH RMSE) over them; None when none of them ran."""
    if not models:
        return None
    return report.target(all(rows[m]["met"] for m in models), models=models,
                         min_margin=min((v for m in models for v in rows[m]["margins"].values()),
                                        default=None))


def targets(results: dict, config) -> dict:
    """Issue targets: EARTH beats every baseline in test RMSE at every horizon (per dataset);
    each ablation costs accuracy (higher RMSE than EARTH) at every horizon. Target records:
    per other model (`vs`) EARTH better at every horizon with the margins, and the dataset's
    targets over them (None: no such model ran)."""
    out = {}
    for ds, models in results.items():
        if "earth" not in models:
            continue
        e = models["earth"]["test"]
        rows = {}
        for other, r in models.items():
            if other == "earth":
                continue
            margins = {h: r["test"][h]["rmse"] - e[h]["rmse"] for h in e}
            rows[other] = report.target(all(m > 0 for m in margins.values()), margins=margins)
        out[ds] = {"vs": rows,
                   "beats_all_baselines": _all_better(
                       rows, [m for m in rows if m in baselines.BASELINES]),
                   "every_ablation_costs": _all_better(
                       rows, [m for m in rows if m in model_lib.VARIANTS])}
        if "epignn" in rows:   # EARTH at or below EpiGNN's RMSE at every horizon
            margins = rows["epignn"]["margins"].values()
            out[ds]["at_or_below_epignn"] = report.target(all(m >= 0 for m in margins),
                                                          min_margin=min(margins, default=None))
    return out


def results_markdown(results: dict, config) -> str:
    lines = ["| dataset | model | " + " | ".join(f"RMSE h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"MAE h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"PCC h={h}" for h in config.data.horizons)
             + " | " + " | ".join(f"peak-MAE h={h}" for h in config.data.horizons) + " |"]
    k = len(config.data.horizons)
    lines.append("|" + "---|" * (2 + 4 * k))
    for ds, models in results.items():
        best = {str(h): min(r["test"][str(h)]["rmse"] for r in models.values())
                for h in config.data.horizons}
        for name, r in models.items():
            cells = []
            for key in ("rmse", "mae", "pcc", "peak_mae"):
                for h in config.data.horizons:
                    v = r["test"][str(h)][key]
                    c = report.cell(v, 3 if key == "pcc" else 4)
                    cells.append(f"**{c}**" if key == "rmse" and v == best[str(h)] else c)
            lines.append(f"| {ds} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def dataset_table(name: str, models: dict, horizons: list) -> str:
    hs = [str(h) for h in horizons]
    head = ("| model | " + " | ".join(f"RMSE h={h}" for h in hs) + " | "
            + " | ".join(f"MAE h={h}" for h in hs) + " | " + " | ".join(f"PCC h={h}" for h in hs)
            + " | " + " | ".join(f"peak-MAE h={h}" for h in hs)
            + " | peak-time err (steps) | peak-value err |")
    lines = [f"**{name}** (test split)", "", head, "|" + "---|" * (3 + 4 * len(hs))]
    best = {h: min(r["test"][h]["rmse"] for r in models.values()) for h in hs}
    order = [m for m in ("earth", *ABLATIONS, "epignn", *BASELINES) if m in models]
    for model in order:
        r = models[model]
        t = r["test"]

        def rmse(h):   # mean ± seed std where several seeds were trained
            c = report.cell(t[h]["rmse"], 4)
            c = f"**{c}**" if t[h]["rmse"] == best[h] else c
            seeds = len(t[h].get("rmse_seeds", []))
            return f"{c} ± {report.cell(t[h]['rmse_std'], 2)}" if seeds > 1 and model_trained(r) else c

        cells = [rmse(h) for h in hs]
        cells += [report.cell(t[h]["mae"], 4) for h in hs]
        cells += [report.cell(t[h]["pcc"], 3, "f") for h in hs]
        cells += [report.cell(t[h]["peak_mae"], 4) for h in hs]
        cells.append(" / ".join(report.cell(t[h]["peak_time"], 2) for h in hs))
        cells.append(" / ".join(report.cell(t[h]["peak_value"], 3) for h in hs))
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def model_trained(r: dict) -> bool:
    """Whether a results entry comes from trained copies (persistence has no seed spread)."""
    return "selection" in r or any(v.get("rmse_std", 0.0) > 1e-9 * max(abs(v["rmse"]), 1.0)
                                   for v in r["test"].values())   # float noise is not a spread


def epignn_table(results: dict) -> str:
    """The EpiGNN target per dataset: EARTH's mean test RMSE at or below EpiGNN's at every
    horizon, with the margins and both seed spreads, and the selected epochs."""
    hs = [str(h) for h in results["horizons"]]
    lines = ["| dataset | EARTH RMSE ≤ EpiGNN at every horizon | EpiGNN − EARTH per horizon "
             "(mean; > 0 means EARTH better) | seed std EARTH / EpiGNN | best epochs EARTH; "
             "EpiGNN (stopped at epoch: why) |", "|---|---|---|---|---|"]
    for ds, t in results["targets"].items():
        if "at_or_below_epignn" not in t:
            continue
        e, g = results["results"][ds]["earth"], results["results"][ds]["epignn"]
        margins = "/".join(report.cell(t["vs"]["epignn"]["margins"][h], 3) for h in hs)
        spread = "/".join(f"{report.cell(e['test'][h]['rmse_std'], 2)} vs "
                          f"{report.cell(g['test'][h]['rmse_std'], 2)}" for h in hs)

        def ep(r):
            s = r.get("selection")
            if s is None:
                return "—"
            why = "time cap" if s.get("stopped_by_budget") else (
                "patience" if s["stopped_at_epoch"] < s["max_epochs"] else "max epochs")
            return (",".join(str(v) for v in s["best_epoch"])
                    + f" (stopped at {s['stopped_at_epoch']}/{s['max_epochs']}: {why})")

        lines.append(f"| {ds} | {report.verdict(t['at_or_below_epignn'])} | {margins} "
                     f"| {spread} | {ep(e)}; {ep(g)} |")
    return "\n".join(lines)


def targets_table(results: dict) -> str:
    hs = [str(h) for h in results["horizons"]]  # results.json stores dict keys sorted as text
    lines = ["| dataset | EARTH beats every baseline in RMSE at every horizon | each ablation costs "
             "accuracy | RMSE margins (other − EARTH; > 0 means EARTH better), per horizon |",
             "|---|---|---|---|"]
    for ds, t in results["targets"].items():
        vs = t["vs"]
        margins = "; ".join(f"{m}: " + "/".join(report.cell(vs[m]["margins"][h], 3) for h in hs)
                            for m in (*BASELINES, *ABLATIONS) if m in vs)
        flag = lambda x: "—" if x is None else report.verdict(x)  # noqa: E731
        lines.append(f"| {ds} | {flag(t['beats_all_baselines'])} | {flag(t['every_ablation_costs'])} "
                     f"| {margins} |")
    real = [ds for ds in results["targets"] if ds not in ("simulated", "custom")]
    won = [ds for ds in real if report.met_of(results["targets"][ds]["beats_all_baselines"])]
    lines.append("")
    lines.append(f"Real benchmark files where EARTH beats every baseline at every horizon: "
                 f"{len(won)} of {len(real)} run ({', '.join(won) or 'none'}); target: at least 3 of 4.")
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    parts = [dataset_table(ds, models, results["horizons"]) for ds, models in results["results"].items()]
    done = "complete" if results.get("complete") else (
        "INCOMPLETE: datasets not listed did not finish")
    if any("at_or_below_epignn" in t for t in results["targets"].values()):
        hs = ", ".join(str(h) for h in results["horizons"])
        parts.append(f"EARTH vs EpiGNN (EpiGNN's protocol; copies listed h = {hs} × "
                     "seeds):\n\n" + epignn_table(results))
    elif results["targets"]:
        parts.append("Targets:\n\n" + targets_table(results))
    sel = config.get("select", {})
    budget = (f"models {', '.join(config['models'])}; best-validation epoch of at most "
              f"{sel['max_epochs']} epochs, patience {sel['patience']}" if sel.get("enabled")
              else f"{results['num_steps']} steps")
    if "model" in config:   # a run recorded before `model.dynamics` existed ran "sirs"
        budget = f"EANO dynamics {config['model'].get('dynamics', 'sirs')}; {budget}"
    parts.append(f"Config `{config['tag']}` ({budget}, {results['num_seeds']} "
                 f"seed(s) per horizon; run {done}); measured on {results['machine']} in "
                 f"{results['wall_s']:.0f} s. Datasets: "
                 + ", ".join(f"{k} ({v['steps']} × {v['regions']})" for k, v in results["datasets"].items())
                 + ". Forecast plots: `plots/forecast_<dataset>_h<h>.png` in the workdir.")
    return "\n\n".join(parts)


def forecast_plot(path: str, prep, dataset: str, h: int, forecasts: dict) -> None:
    """One panel per region: test truth vs each model's h-step forecast."""
    import matplotlib.pyplot as plt

    n = prep.series.shape[1]
    cols = min(n, 7)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.4 * cols, 1.8 * rows), squeeze=False)
    any_model = next(iter(forecasts.values()))
    t = any_model[h][0]
    for v in range(rows * cols):
        ax = axes[v // cols, v % cols]
        if v >= n:
            ax.axis("off")
            continue
        ax.plot(t, prep.series[t, v], "k-", lw=1.2, label="truth")
        for model, fc in forecasts.items():
            ax.plot(fc[h][0], fc[h][1][:, v], lw=0.9, label=model,
                    ls="-" if model == "earth" else "--")
        ax.set_title(f"region {v}", fontsize=7)
        ax.tick_params(labelsize=5)
    axes[0, 0].legend(fontsize=5)
    fig.suptitle(f"{dataset}: test-period forecasts at horizon {h}", fontsize=9)
    fig.tight_layout()
    plotting.save(fig, path)
