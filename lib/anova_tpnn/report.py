"""Targets, markdown tables and component plots of an ANOVA-TPNN run (results.json layout:
results["datasets"][name]["modes"][mode][model] = summary from lib/anova_tpnn/runs.py).
The tables' "selected step" is the mean over replicas of the step whose params were kept
(best validation loss); "—" for the EBM (its own early stopping) or without validation.

Targets (stability and recovery are judged on the purified components,
lib/anova_tpnn/purify.py, when the run has them, the raw ones staying as secondary rows):
  stability   ANOVA-TPNN's stability score (lower = more stable) at least 2× smaller than
              NA²M's and NB²M's on every data set, for every replica mode run; on purified
              components of a synthetic set the judged score is the across-replica
              variance / true variance on the components that carry signal
              ("stability_purified_signal"); the unit-RMS score averaged uniformly over all
              components ("stability_purified") is a secondary row;
  recovery    lower relative component error than NA²M and NB²M on every synthetic set;
  prediction  within 5% of the best baseline's test metric on every data set, the
              baselines being every other model run (NA²M, NB²M, MLP, and EBM when on)
              (RMSE: tpnn ≤ 1.05·best; AUROC: tpnn ≥ 0.95·best).
"""
from __future__ import annotations

import os

import numpy as np

from lib.common import workdir as wd
from lib.common.report import machine_text, read_results, target, verdict
from lib.toolbox import plotting

STABILITY_FACTOR = 2.0
PREDICTION_GAP = 0.05
REFERENCES = ("nam", "nbm")
MODEL_ORDER = ("tpnn", "nam", "nbm", "mlp", "ebm")
# the judged score (purified components, variance / true variance on the signal components;
# present in runs with eval.purify_grid > 0 on synthetic sets), the purified unit-RMS score
# over all components, the score on raw components, then secondary views of the same numbers
STABILITY_KEYS = ("stability_purified_signal", "stability_purified", "stability",
                  "stability_centred", "stability_mains", "stability_weighted")
PURIFIED_KEYS = ("stability_purified_signal", "stability_purified", "recovery_purified")
RECOVERY_KEYS = ("recovery_purified", "recovery", "recovery_centred")


def prediction_gap(task: str, tpnn: float, best: float) -> float:
    """Relative shortfall of ANOVA-TPNN against the best baseline (> 0 = worse)."""
    return tpnn / best - 1.0 if task == "regression" else (best - tpnn) / best


def targets(results: dict) -> dict:
    out: dict = {key: {} for key in (*STABILITY_KEYS, *RECOVERY_KEYS, "prediction")}
    for name, entry in results["datasets"].items():
        for mode, models in entry["modes"].items():
            tp = models["tpnn"]
            for key in STABILITY_KEYS:
                if tp.get(key) is None:
                    continue
                ratios = {ref: models[ref][key] / max(tp[key], 1e-300)
                          for ref in REFERENCES if models.get(ref, {}).get(key) is not None}
                out[key][f"{name}/{mode}"] = target(
                    bool(ratios) and all(r >= STABILITY_FACTOR for r in ratios.values()),
                    ratios=ratios)
            if mode != "seed":
                continue
            for key in RECOVERY_KEYS:
                if key in tp:
                    errs = {ref: models[ref][key] for ref in REFERENCES if ref in models}
                    out[key][name] = target(bool(errs) and all(tp[key] < e for e in errs.values()),
                                            tpnn=tp[key], **errs)
            base = {k: v["metric"] for k, v in models.items() if k != "tpnn"}
            if base:
                pick = min if entry["task"] == "regression" else max
                best_name = pick(base, key=base.get)
                gap = prediction_gap(entry["task"], tp["metric"], base[best_name])
                out["prediction"][name] = target(gap <= PREDICTION_GAP, tpnn=tp["metric"],
                                                 best=best_name, best_metric=base[best_name],
                                                 gap=gap)
    for key in PURIFIED_KEYS:
        if not out[key]:
            del out[key]                        # a run without purified scores
    for key in list(out):
        items = out[key]
        out[key] = {"all_met": bool(items) and all(v["met"] for v in items.values()),
                    "per_set": items}
    return out


def _fmt(v, digits=3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def tables(results: dict) -> str:
    """One markdown table per data set plus the target summary."""
    lines = []
    for name, entry in results["datasets"].items():
        if any("stability_purified" in v for models in entry["modes"].values()
               for v in models.values()):
            lines += _purified_table(name, entry)
            continue
        metric = "RMSE ↓" if entry["task"] == "regression" else "AUROC ↑"
        lines += [f"**{name}** ({entry['task']}, n_train = {entry['n_train']}, "
                  f"n_val = {entry.get('n_val', 0)}, n_test = {entry['n_test']}, "
                  f"p = {entry['num_features']}, {entry['num_components']} components)", "",
                  f"| model | test {metric} (± SE) | stability, seeds ↓ | stability, resamples ↓ "
                  "| seeds, centred ↓ | seeds, mains only ↓ | seeds, importance-weighted ↓ "
                  "| recovery error ↓ | recovery, centred ↓ | selected step |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        seed = entry["modes"].get("seed", {})
        res = entry["modes"].get("resample", {})
        present = list(seed) + [k for k in res if k not in seed]
        for model in sorted(present, key=lambda k: (MODEL_ORDER.index(k)
                                                    if k in MODEL_ORDER else len(MODEL_ORDER), k)):
            s, r = seed.get(model, {}), res.get(model, {})
            m = s or r
            lines.append(
                f"| {model} | {_fmt(m.get('metric'), 4)} ± {_fmt(m.get('metric_se'), 4)} "
                f"| {_fmt(s.get('stability'), 4)} | {_fmt(r.get('stability'), 4)} "
                f"| {_fmt(s.get('stability_centred'), 4)} | {_fmt(s.get('stability_mains'), 4)} "
                f"| {_fmt(s.get('stability_weighted'), 4)} | {_fmt(s.get('recovery'))} "
                f"| {_fmt(s.get('recovery_centred'))} | {_fmt(m.get('selected_step'), 0)} |")
        lines.append("")
    t = results["targets"]
    lines += ["| target | result | details |", "|---|---|---|"]
    for key, label in (("stability_purified_signal", "**stability ≥ 2× NAM and NBM, purified "
                                                     "components, variance / true variance "
                                                     "on the signal components (judged)**"),
                       ("stability_purified", "same, purified, unit-RMS score averaged over "
                                              "all components (secondary)"),
                       ("recovery_purified", "**recovery error < NAM and NBM, purified "
                                             "(judged)**"),
                       ("stability", "stability ≥ 2× NAM and NBM (raw components)"),
                       ("stability_centred", "same, components centred post hoc"),
                       ("stability_mains", "same, main effects only (secondary)"),
                       ("stability_weighted", "same, importance-weighted (secondary)"),
                       ("recovery", "recovery error < NAM and NBM"),
                       ("recovery_centred", "same, components centred post hoc"),
                       ("prediction", "within 5% of best baseline")):
        per = t.get(key, {}).get("per_set")
        if not per:
            continue
        detail = []
        for where, v in per.items():
            if "ratios" in v:
                txt = ", ".join(f"{k} {x:.1f}×" for k, x in v["ratios"].items())
            elif "gap" in v:
                txt = f"gap {100 * v['gap']:+.1f}% vs {v['best']}"
            else:
                txt = ", ".join(f"{k} {v[k]:.3f}" for k in ("tpnn", *REFERENCES) if k in v)
            detail.append(f"{where}: {txt} ({'met' if v['met'] else 'missed'})")
        lines.append(f"| {label} | {verdict(t[key]['all_met'])} | "
                     f"{'; '.join(detail)} |")
    return "\n".join(lines)


def _models_sorted(present) -> list:
    return sorted(present, key=lambda k: (MODEL_ORDER.index(k) if k in MODEL_ORDER
                                          else len(MODEL_ORDER), k))


def _purified_table(name: str, entry: dict) -> list[str]:
    """One data set's table of a run with purified scores: purified stability (variance /
    true variance on the signal components, then the unit-RMS score over all components;
    seeds, resamples, mains) and recovery first, the raw scores as secondary columns."""
    metric = "RMSE ↓" if entry["task"] == "regression" else "AUROC ↑"
    lines = [f"**{name}** ({entry['task']}, n_train = {entry['n_train']}, "
             f"n_val = {entry.get('n_val', 0)}, n_test = {entry['n_test']}, "
             f"p = {entry['num_features']}, {entry['num_components']} components)", "",
             f"| model | test {metric} (± SE) | purified var / true var, signal components, "
             "seeds ↓ | same, resamples ↓ | purified unit-RMS, all components, seeds ↓ "
             "| same, resamples ↓ | purified unit-RMS, mains (seeds) ↓ "
             "| purified recovery ↓ (± SE) | raw stability, seeds | raw, resamples "
             "| raw recovery | selected step |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    seed = entry["modes"].get("seed", {})
    res = entry["modes"].get("resample", {})
    for model in _models_sorted(list(seed) + [k for k in res if k not in seed]):
        s, r = seed.get(model, {}), res.get(model, {})
        m = s or r
        rec = ("—" if s.get("recovery_purified") is None else
               f"{s['recovery_purified']:.3f} ± {s['recovery_purified_se']:.3f}")
        lines.append(
            f"| {model} | {_fmt(m.get('metric'), 4)} ± {_fmt(m.get('metric_se'), 4)} "
            f"| {_fmt(s.get('stability_purified_signal'), 4)} "
            f"| {_fmt(r.get('stability_purified_signal'), 4)} "
            f"| {_fmt(s.get('stability_purified'), 4)} | {_fmt(r.get('stability_purified'), 4)} "
            f"| {_fmt(s.get('stability_purified_mains'), 4)} | {rec} "
            f"| {_fmt(s.get('stability'), 4)} | {_fmt(r.get('stability'), 4)} "
            f"| {_fmt(s.get('recovery'))} | {_fmt(m.get('selected_step'), 0)} |")
    return lines + [""]


def merge(runs: list[tuple[str, dict, dict]]) -> tuple[dict, dict]:
    """(results, config) over runs given as (workdir, results, config) of the same variant
    on other data sets, models or replica modes; the targets are recomputed over all of
    them. ValueError for configs differing beyond datasets/models/replica modes, or for a
    model whose metric differs between runs."""
    results, config = {"datasets": {}}, None
    walls, machines, complete = [], [], []
    first = runs[0][0]
    for w, r, c in runs:
        rest = {k: v for k, v in c.items() if k not in ("datasets", "models")}
        rest["replicas"] = {k: v for k, v in rest["replicas"].items() if k != "modes"}
        if config is not None and rest != config:
            raise ValueError(f"{w}: config differs from {first} beyond datasets/models/"
                             "replica modes")
        config = rest
        for name, entry in r["datasets"].items():
            if name not in results["datasets"]:
                results["datasets"][name] = entry
                continue
            for mode, models in entry["modes"].items():       # same set, other models
                have = results["datasets"][name]["modes"].setdefault(mode, {})
                for model, summary in models.items():
                    if model in have and have[model]["metric"] != summary["metric"]:
                        raise ValueError(f"{name}/{mode}/{model} differs between workdirs")
                    have[model] = summary
        walls.append(r["wall_s"])
        complete.append(r.get("complete", True))
        machines.append(r["machine"])
    results["targets"] = targets(results)
    results["complete"] = all(complete)
    results["machine"] = machines[0]
    results["wall_s"] = max(walls)
    results["wall_s_per_workdir"] = walls
    return results, config


def render(results: dict, config: dict, more: tuple = ()) -> str:
    """The README block of a run (merged with `more` runs, (workdir, results, config) each):
    a partial-run note, the tables, the config tag, selection, machine and wall times."""
    results, config = merge([("--workdir", results, config), *more])
    num = 1 + len(more)
    walls = ", ".join(f"{w / 60:.0f}" for w in results["wall_s_per_workdir"])
    partial = ("" if results["complete"] else
               "**Partial run**: the workdir's results.json says data sets of the config are "
               "still to come; only the data sets in the tables below were run.\n\n")
    ebm = (f"on, seeds only, {config['ebm']['num_replicas']} replicas"
           if config["ebm"]["enabled"] else "off")
    every = (f"{config['eval']['val_every_epochs']:g} epochs"
             if config["eval"].get("val_every_epochs", 0) > 0
             else f"{config['eval']['val_every']} steps")
    select = (f"each replica's params selected at its best validation loss, checked every "
              f"{every}" if config["data"].get("val_fraction", 0) > 0
              else "no validation split: last step")
    if config.get("epochs", 0) > 0:
        select += (f"; budget {config['epochs']:g} epochs of batch {config['batch_size']} "
                   f"(capped at the training rows)")
    if config["replicas"].get("batch_order", "shared") == "per_replica":
        select += "; each replica draws its own minibatch order"
    if config["eval"].get("purify_grid", 0) > 0:
        select += (f"; purified on M × M quantile grids, M = the smallest prime >= "
                   f"{config['eval']['purify_grid']} and p")
    return (f"{partial}{tables(results)}\n\nConfig `{config['tag']}` (EBM {ebm}; "
            f"{select}); measured on "
            f"{machine_text(results['machine'])}; wall time per process {walls} min "
            f"({num} process{'es' if num > 1 else ''}).")


RESULTS_FLAGS = {
    "more_workdirs": ("string", "", "Further run directories, comma-separated, merged with "
                      "--workdir."),
    "merged_out": ("string", None, "Write the merged results.json here.")}


def results_block(results: dict, config: dict, workdir: str, more_workdirs: str,
                  merged_out: str | None) -> str:
    """`render` of the run merged with those of `more_workdirs` (comma-separated; the same
    variant on other data sets, models or replica modes), first writing the merged
    results.json into `merged_out` when given."""
    more = tuple((w, read_results(w, "anova_tpnn"), wd.read_json(os.path.join(w, wd.CONFIG)))
                 for w in more_workdirs.split(",") if w)
    if merged_out:
        merged, _ = merge([("--workdir", results, config), *more])
        wd.write_json_atomic(os.path.join(merged_out, wd.RESULTS), merged)
    return render(results, config, more)


def component_plot(path: str, ds, comps_by_model: dict, names: list, num: int) -> str:
    """Main effects with seed bands: rows = the `num` largest ANOVA-TPNN main effects,
    columns = models; each panel shows the across-replica mean ± 1 SD against the
    (quantile-transformed) feature, and the true component (synthetic sets) as dots."""
    plt = plotting.pyplot()
    x_all = np.concatenate([ds.x_train, ds.x_test])
    mains = [i for i, k in enumerate(names) if len(k) == 1]
    tp = comps_by_model["tpnn"]
    imp = np.mean(tp[:, :, mains] ** 2, axis=(0, 1))
    chosen = [mains[i] for i in np.argsort(-imp)[:num]]
    models = list(comps_by_model)
    fig, axes = plt.subplots(len(chosen), len(models), figsize=(3 * len(models),
                                                                 2.4 * len(chosen)),
                             squeeze=False)
    for r, col in enumerate(chosen):
        j = names[col][0]
        order = np.argsort(x_all[:, j])
        xs = x_all[order, j]
        for c, model in enumerate(models):
            ax = axes[r, c]
            v = comps_by_model[model][:, order, col]
            mean, sd = v.mean(axis=0), v.std(axis=0)
            ax.fill_between(xs, mean - sd, mean + sd, alpha=0.3, color=f"C{c}")
            ax.plot(xs, mean, color=f"C{c}", linewidth=1.2)
            if ds.truth is not None and names[col] in ds.truth:
                ax.plot(ds.x_test[:, j], ds.truth[names[col]], "k.", markersize=1.5)
            ax.axhline(0.0, color="gray", linewidth=0.5)
            if r == 0:
                ax.set_title(model)
            if c == 0:
                ax.set_ylabel(f"f({ds.feature_names[j]})", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.suptitle(f"{ds.name}: main effects, mean ± SD over replicas (seeds)", fontsize=9)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
