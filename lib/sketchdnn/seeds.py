"""SketchDNN over training seeds: mean ± std per model, rankings only where seeds separate.

Input: the results.json of several runs of one config that differ only in `train.seed`
(same data, encoder and sampling keys). For each model and metric, the mean and the
sample standard deviation (ddof = 1) over seeds; for each pair of models and a metric,
"separated" when |mean_a − mean_b| > 2 · max(std_a, std_b) (the issue's "more than 2 seed
standard deviations"; the larger of the two spreads, so a pair is never called separated
on the strength of one tight model). A claim "A beats B" is MET when A is better and
separated, MISSED when B is better and separated, TIED otherwise. The positional-encoding
claim (the ablation does worse on FD and on the NLL bound) is MET when it is worse and
separated on both, MISSED when it is better and separated on either, TIED otherwise.
A run's "nll" is its tightest bound; Gaussian-Softmax runs also carry the bound under each
reverse parameterisation (`OPTIONAL`), tabulated beside it.
"""
from __future__ import annotations

import numpy as np

from lib.common.report import cell
from lib.sketchdnn.report import BASELINES, GS, LABELS, PE, X0_LABELS

# (column, how to read it from a run entry, lower is better)
METRICS = {
    "fd": (lambda r: r["fd"], True),
    "precision": (lambda r: r["precision"], False),
    "recall": (lambda r: r["recall"], False),
    "nll": (lambda r: r["nll"]["total"], True),
    "dangling": (lambda r: r["validity"]["dangling_fraction"], True),
    "closed": (lambda r: r["validity"]["closed_rate"], False),
    "type_tv": (lambda r: r["type_tv"], True),
    "count_tv": (lambda r: r["count_tv"], True),
}
# the NLL bound under each reverse parameterisation of x̂₀'s logits (Gaussian-Softmax only)
OPTIONAL = {f"nll_{name}": (lambda r, n=name: r["nll"]["by_x0_logits"][n]["total"], True)
            for name in X0_LABELS}
CLAIMS = (("fd", "Gaussian-Softmax beats one-hot Gaussian and D3PM on FD"),
          ("nll", "Gaussian-Softmax beats one-hot Gaussian and D3PM on the NLL bound"))
PE_CLAIM = "positional-encoding ablation does worse (FD and NLL bound)"


def summarise(all_results: list[dict]) -> dict:
    """{model: {metric: (mean, std, n)}} over the runs that contain the model.

    Raises ValueError when fewer than 2 results are given or the runs disagree on the data
    (different held-out floors mean a different test set or encoder)."""
    if len(all_results) < 2:
        raise ValueError(f"need the results of at least 2 seeds, got {len(all_results)}")
    floors = {round(r["reference"]["fd"], 9) for r in all_results}
    if len(floors) != 1:
        raise ValueError(f"the runs have different held-out floors (FD {sorted(floors)}): "
                         "not the same data and encoder; vary only train.seed")
    models = [m for m in all_results[0]["runs"]]
    out = {}
    for m in models:
        entries = [r["runs"][m] for r in all_results if m in r["runs"]]
        out[m] = {}
        optional = {k: v for k, v in OPTIONAL.items()
                    if all(e["nll"].get("by_x0_logits") for e in entries)}
        for name, (get, _) in {**METRICS, **optional}.items():
            v = np.array([get(e) for e in entries], np.float64)
            out[m][name] = (float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                            len(v))
    return out


def compare(summary: dict, a: str, b: str, metric: str) -> str:
    """'better', 'worse' (a against b, separated by > 2 seed std) or 'tied'."""
    (ma, sa, _), (mb, sb, _) = summary[a][metric], summary[b][metric]
    if abs(ma - mb) <= 2 * max(sa, sb):
        return "tied"
    lower = {**METRICS, **OPTIONAL}[metric][1]
    return "better" if (ma < mb) == lower else "worse"


def claims(summary: dict) -> dict:
    """{metric: {"verdict": MET/MISSED/TIED/not run, baseline: compare(...)}}."""
    out = {}
    for metric, _ in CLAIMS:
        if GS not in summary or not all(b in summary for b in BASELINES):
            out[metric] = {"verdict": "not run"}
            continue
        res = {b: compare(summary, GS, b, metric) for b in BASELINES}
        verdict = ("MET" if all(v == "better" for v in res.values()) else
                   "MISSED" if any(v == "worse" for v in res.values()) else "TIED")
        out[metric] = {"verdict": verdict, **res}
    if GS in summary and PE in summary:
        res = {m: compare(summary, PE, GS, m) for m in ("fd", "nll")}
        verdict = ("MET" if all(v == "worse" for v in res.values()) else
                   "MISSED" if any(v == "better" for v in res.values()) else "TIED")
        out["pe"] = {"verdict": verdict, **res}
    else:
        out["pe"] = {"verdict": "not run"}
    return out


def _ms(stat) -> str:
    mean, std, _ = stat
    return f"{cell(mean)} ± {cell(std)}"


def curve_summary(all_results: list[dict]) -> dict:
    """{model: {step: {"fd": (mean, std, n), "dangling": ..., "closed": ...}}}."""
    keys = {"fd": "fd", "dangling": "dangling_fraction", "closed": "closed_rate"}
    out: dict = {}
    for m in all_results[0]["runs"]:
        rows: dict = {}
        for r in all_results:
            for row in r["runs"].get(m, {}).get("curve", []):
                rows.setdefault(row["step"], []).append(row)
        out[m] = {}
        for step in sorted(rows):
            out[m][step] = {}
            for k, src in keys.items():
                v = np.array([row[src] for row in rows[step]], np.float64)
                out[m][step][k] = (float(v.mean()),
                                   float(v.std(ddof=1)) if len(v) > 1 else 0.0, len(v))
    return out


def markdown(all_results: list[dict], seeds: list[int], label: str = "",
             curve_samples: int = 0) -> str:
    """The seed table, the claims with their separation, and the curves (curve_samples:
    the samples per curve point, from the config)."""
    s = summarise(all_results)
    ref = all_results[0]["reference"]
    both = any(k in st for st in s.values() for k in OPTIONAL)
    lines = [
        ("| model | seeds | FD ↓ | precision ↑ | recall ↑ | NLL bound, bits/sketch ↓ | "
         + ("by reverse x̂₀ logits: " + " / ".join(X0_LABELS.values()) + " | " if both else "")
         + "dangling ends ↓ | closed profiles ↑ | type TV ↓ | count TV ↓ |"),
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if both else ""),
        (f"| held-out data (floor) | — | {cell(ref['fd'])} | {cell(ref['precision'])} | "
         f"{cell(ref['recall'])} | — | " + ("— | " if both else "")
         + f"{cell(ref['validity']['dangling_fraction'])} | "
         f"{cell(ref['validity']['closed_rate'])} | {cell(ref['type_tv'])} | "
         f"{cell(ref['count_tv'])} |")]
    for m, st in s.items():
        cells = [_ms(st[k]) for k in METRICS]
        if both:
            cells.insert(4, " / ".join(_ms(st[k]) for k in OPTIONAL) if all(
                k in st for k in OPTIONAL) else "—")
        lines.append(f"| {LABELS.get(m, m)}{label} | {st['fd'][2]} | " + " | ".join(cells)
                     + " |")
    c = claims(s)
    lines += ["", "| target (ranked only where > 2 seed std apart) | result |", "|---|---|"]
    for metric, text in CLAIMS:
        v = c[metric]
        word = {"better": "better than", "worse": "worse than", "tied": "tied with"}
        detail = ", ".join(f"{word[v[b]]} {LABELS[b]}" for b in BASELINES if b in v)
        lines.append(f"| {text} | **{v['verdict']}**" + (f" ({detail})" if detail else "")
                     + " |")
    pe = c["pe"]
    if pe["verdict"] != "not run":
        detail = ", ".join(f"{k.upper()} {pe[k]}" for k in ("fd", "nll"))
        lines.append(f"| {PE_CLAIM} | **{pe['verdict']}** ({detail}, against "
                     f"{LABELS[GS]} without it) |")
    curves = curve_markdown(all_results, curve_samples)
    if curves:
        lines += ["", curves]
    lines += ["", f"Seeds (train.seed) {', '.join(map(str, seeds))}; mean ± sample std over "
              "seeds; data, metric encoder and sampling keys shared."
              + (" NLL bound: for Gaussian-Softmax the tighter of the bounds under the two "
                 "reverse parameterisations of x̂₀'s logits (same weights, sketches and noise)."
                 if both else "")]
    return "\n".join(lines)


def curve_markdown(all_results: list[dict], curve_samples: int = 0) -> str:
    """The FD / dangling-end / closed-profile curves (mean ± std over seeds, n per cell);
    "" when no run recorded a curve. Needs only runs[model]["curve"] of each result."""
    curves = curve_summary(all_results)
    if not any(curves[m] for m in curves):
        return ""
    steps = sorted({st for m in curves for st in curves[m]})
    n = curve_samples
    lines = [(f"Curves (mean ± std over the seeds that reached the step, their number in "
              f"brackets; {n} samples per point, so FD here is biased up against the "
              "table's):" if n else "Curves (mean ± std over seeds):"), "",
             "| model | metric | " + " | ".join(f"step {x}" for x in steps) + " |",
             "|---|---|" + "---|" * len(steps)]
    for m, rows in curves.items():
        for k, name in (("fd", "FD"), ("dangling", "dangling ends"),
                        ("closed", "closed profiles")):
            vals = [f"{_ms(rows[x][k])} ({rows[x][k][2]})" if x in rows else "—"
                    for x in steps]
            lines.append(f"| {LABELS.get(m, m)} | {name} | " + " | ".join(vals) + " |")
    return "\n".join(lines)
