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

`load` reads a seed workdir, `render` gives the README block of several, `targets` the
claims as target records (what `tools/results.py --publish` writes).
"""
from __future__ import annotations

import os
import re

import numpy as np

from lib.common import config as config_lib, workdir as wd
from lib.common.report import cell, machine_text, target
from lib.sketchdnn import config_schema
from lib.sketchdnn.names import BASELINES, GS, LABELS, PE, X0_LABELS

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


def _num(x: float) -> str:
    """3 significant digits, but every integer digit of a number ≥ 1000 (bits per sketch)."""
    return f"{x:.0f}" if abs(x) >= 1000 else cell(x)


def _ms(stat) -> str:
    mean, std, _ = stat
    return f"{_num(mean)} ± {_num(std)}"


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
    extra = len(OPTIONAL) if both else 0
    lines = [
        ("| model | seeds | FD ↓ | precision ↑ | recall ↑ | NLL bound, bits/sketch ↓ | "
         + "".join(f"NLL, x̂₀ logits {X0_LABELS[k[4:]]} ↓ | " for k in OPTIONAL if both)
         + "dangling ends ↓ | closed profiles ↑ | type TV ↓ | count TV ↓ |"),
        "|---|---|---|---|---|---|---|---|---|---|" + "---|" * extra,
        (f"| held-out data (floor) | — | {cell(ref['fd'])} | {cell(ref['precision'])} | "
         f"{cell(ref['recall'])} | — | " + "— | " * extra
         + f"{cell(ref['validity']['dangling_fraction'])} | "
         f"{cell(ref['validity']['closed_rate'])} | {cell(ref['type_tv'])} | "
         f"{cell(ref['count_tv'])} |")]
    for m, st in s.items():
        cells = [_ms(st[k]) for k in METRICS]
        if both:
            cells[4:4] = _bound_cells(st)
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
              + (" NLL bound: the model's bound, for Gaussian-Softmax the tighter of its "
                 "bounds under the two reverse parameterisations of x̂₀'s logits (the "
                 "columns beside it, the tighter in bold; same weights, sketches and noise; "
                 "2·log p̂ is the official sampler's)." if both else "")]
    return "\n".join(lines)


def _bound_cells(stats: dict) -> list[str]:
    """The cells of the bounds under each x̂₀ parameterisation (`OPTIONAL`), the lowest mean
    in bold; "—" for a model without them."""
    if not all(k in stats for k in OPTIONAL):
        return ["—"] * len(OPTIONAL)
    best = min(OPTIONAL, key=lambda k: stats[k][0])
    return [f"**{_ms(stats[k])}**" if k == best else _ms(stats[k]) for k in OPTIONAL]


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


def targets(summary: dict) -> dict:
    """The claims over seeds as target records (`lib.common.report.target`), keyed as a
    single run's (`lib.sketchdnn.report.targets`): "met" only for MET (a TIED claim is not
    met), the verdict, the comparisons and each model's mean, std and seed count; None for a
    claim whose models did not run."""
    c, out = claims(summary), {}
    for key, (metric, models) in {"fd_beats_baselines": ("fd", (GS, *BASELINES)),
                                  "nll_beats_baselines": ("nll", (GS, *BASELINES)),
                                  "pe_does_worse": (None, (GS, PE))}.items():
        claim = c["pe" if metric is None else metric]
        if claim["verdict"] == "not run":
            out[key] = None
            continue
        shown = ("fd", "nll") if metric is None else (metric,)
        stats = {m: {k: dict(zip(("mean", "std", "seeds"), summary[m][k])) for k in shown}
                 for m in models}
        bounds = {m: {k[4:]: summary[m][k][0] for k in OPTIONAL if k in summary[m]}
                  for m in models if "nll" in shown and any(k in summary[m] for k in OPTIONAL)}
        out[key] = target(claim["verdict"] == "MET", verdict=claim["verdict"],
                          compared={k: v for k, v in claim.items() if k != "verdict"},
                          stats=stats, **({"nll_by_x0_logits": bounds} if bounds else {}))
    return out


def load(workdir: str) -> tuple[dict | None, dict]:
    """(results.json or None when the run has not finished, config.json with keys recorded
    under an old name read as their new one); FileNotFoundError naming a missing config."""
    config = os.path.join(workdir, "config.json")
    if not os.path.exists(config):
        raise FileNotFoundError(f"{config} is missing: run experiments/sketchdnn/main.py "
                                f"with --workdir={workdir} first")
    results = os.path.join(workdir, "results.json")
    config, _ = config_lib.rename_keys(wd.read_json(config), config_schema.RENAMED_KEYS)
    return (wd.read_json(results) if os.path.exists(results) else None), config


def _partial(workdir: str, config: dict) -> dict:
    """The curves an unfinished run has recorded (models/<run>/curve.json)."""
    runs = {}
    for run in config["runs"]:
        path = os.path.join(workdir, "models", run, "curve.json")
        if os.path.exists(path):
            curve = wd.read_json(path)
            runs[run] = {"curve": [{"step": int(k), **curve[k]} for k in sorted(curve, key=int)]}
    return {"runs": runs}


def check_same_setup(configs: list[dict]) -> None:
    """ValueError unless the seed workdirs' configs agree outside the train block."""
    strip = [{k: v for k, v in c.items() if k != "train"} for c in configs]
    if any(s != strip[0] for s in strip):
        raise ValueError("the workdirs' configs differ outside the train block; "
                         "vary only train.seed")


def render(loaded: list[tuple[dict | None, dict]], workdirs: list[str]) -> str:
    """The README block of the seed workdirs (`load` of each): `markdown` and the set-up, or
    the curves so far when a seed has not finished. ValueError when the configs differ
    outside the train block."""
    configs = [c for _, c in loaded]
    check_same_setup(configs)
    c, o = configs[0], configs[0]["optim"]
    setup = (f"Config `{c['tag']}`: {c['train']['num_steps']} training steps per model "
             f"(batch {o['batch_size']}, Adam {o['lr']:g} {o['schedule']}, clip "
             f"{o['clip']:g}, EMA {o['ema_decay']:g}; CE mean over "
             f"{c['loss']['ce_mean'].replace('_', ' ')}; x̂₀ logits "
             f"{c['diffusion']['x0_logits']}), width {c['model']['width']}, depth "
             f"{c['model']['depth']}")
    if any(r is None for r, _ in loaded):
        partial = [r if r is not None else _partial(w, cf)
                   for (r, cf), w in zip(loaded, workdirs)]
        done = sum(r is not None for r, _ in loaded)
        curves = curve_markdown(partial, c["eval"].get("curve_samples", 0))
        return (f"**Unfinished**: {done} of {len(loaded)} seeds reached the final evaluation; "
                f"the curves recorded so far:\n\n{curves or '(none yet)'}\n\n{setup}; seeds "
                f"(train.seed) {', '.join(str(cf['train']['seed']) for cf in configs)}.")
    results = [r for r, _ in loaded]
    table = markdown(results, [cf["train"]["seed"] for cf in configs],
                     curve_samples=c["eval"].get("curve_samples", 0))
    walls = " / ".join(f"{r['wall_s']:.0f}" for r in results)
    loads = [re.search(r"load average [\d.]+ / ([\d.]+)", r["machine"]) for r in results]
    machine = machine_text(results[0]["machine"])
    if all(loads):
        machine = (re.sub(r",? ?load average .*$", "", results[0]["machine"])
                   + "; 15-min load average at each seed's end "
                   + " / ".join(m.group(1) for m in loads))
    return (f"{table}\n\n{setup}; {results[0]['budget']['num_samples']} samples per model "
            f"({results[0]['budget']['sample_steps']} of T = "
            f"{results[0]['budget']['diffusion_steps']} reverse steps); measured on "
            f"{machine}; wall time per seed's run (encoder, models, evaluation) {walls} s.")
