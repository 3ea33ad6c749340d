"""Render an EARTH run's tables and put them into experiments/earth/README.md.

    python tools/earth_results.py --workdir=workdirs/earth_quick \
        --readme=experiments/earth/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/earth/main.py after every dataset),
prints per dataset the test RMSE / MAE / PCC / peak metrics of every model at every
horizon, the issue's targets as MET / MISSED with the RMSE margins, the machine line, and
with `--readme` replaces the block between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->`. The forecast plots are in `<workdir>/plots/`.
"""
from __future__ import annotations

from lib.common import report

BASELINES = ("persistence", "linear_ar", "gru", "gcn_gru")
ABLATIONS = ("no_eano", "no_gltg", "no_xattn")


def dataset_table(name: str, models: dict, horizons: list) -> str:
    hs = [str(h) for h in horizons]
    head = ("| model | " + " | ".join(f"RMSE h={h}" for h in hs) + " | "
            + " | ".join(f"MAE h={h}" for h in hs) + " | " + " | ".join(f"PCC h={h}" for h in hs)
            + " | " + " | ".join(f"peak-MAE h={h}" for h in hs)
            + " | peak-time err (steps) | peak-value err |")
    lines = [f"**{name}** (test split)", "", head, "|" + "---|" * (3 + 4 * len(hs))]
    best = {h: min(r["test"][h]["rmse"] for r in models.values()) for h in hs}
    order = [m for m in ("earth", *ABLATIONS, *BASELINES) if m in models]
    for model in order:
        r = models[model]
        t = r["test"]
        cells = [f"**{report.cell(t[h]['rmse'], 4)}**" if t[h]["rmse"] == best[h]
                 else report.cell(t[h]["rmse"], 4) for h in hs]
        cells += [report.cell(t[h]["mae"], 4) for h in hs]
        cells += [report.cell(t[h]["pcc"], 3, "f") for h in hs]
        cells += [report.cell(t[h]["peak_mae"], 4) for h in hs]
        cells.append(" / ".join(report.cell(t[h]["peak_time"], 2) for h in hs))
        cells.append(" / ".join(report.cell(t[h]["peak_value"], 3) for h in hs))
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
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
        flag = lambda x: "—" if x is None else ("MET" if x else "MISSED")  # noqa: E731
        lines.append(f"| {ds} | {flag(t['beats_all_baselines'])} | {flag(t['every_ablation_costs'])} "
                     f"| {margins} |")
    real = [ds for ds in results["targets"] if ds not in ("simulated", "custom")]
    won = [ds for ds in real if results["targets"][ds]["beats_all_baselines"]]
    lines.append("")
    lines.append(f"Real benchmark files where EARTH beats every baseline at every horizon: "
                 f"{len(won)} of {len(real)} run ({', '.join(won) or 'none'}); target: at least 3 of 4.")
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    parts = [dataset_table(ds, models, results["horizons"]) for ds, models in results["results"].items()]
    done = "complete" if results.get("complete") else (
        "INCOMPLETE: datasets not listed did not finish")
    parts.append("Targets:\n\n" + targets_table(results))
    parts.append(f"Config `{config['tag']}` ({results['num_steps']} steps, {results['num_seeds']} "
                 f"seed(s) per horizon; run {done}); measured on {results['machine']} in "
                 f"{results['wall_s']:.0f} s. Datasets: "
                 + ", ".join(f"{k} ({v['steps']} × {v['regions']})" for k, v in results["datasets"].items())
                 + ". Forecast plots: `plots/forecast_<dataset>_h<h>.png` in the workdir.")
    return "\n\n".join(parts)


if __name__ == "__main__":
    report.results_tool("earth", render)
