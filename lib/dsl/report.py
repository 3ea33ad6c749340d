"""Tables, targets and plots of a DSL run (from its results.json and metrics.jsonl files).

Targets:
  full_data: on every data set, DSL's mean test accuracy with 100 % of the training rows is
             at least the matched MLP's minus 1 point (0.01);
  low_data:  on most data sets (more than half) DSL is ahead of the MLP in the low-data
             regime, measured as the mean over the fractions <= LOW_DATA_MAX of
             (DSL − MLP) mean test accuracy being > 0.
"""
from __future__ import annotations

import json
import os

import numpy as np

from lib.toolbox import plotting
from lib.common.report import cell, machine_text, target, verdict

LOW_DATA_MAX = 0.1
FULL_DATA_TOLERANCE = 0.01


def ordered(by_fraction: dict) -> list[tuple[str, dict]]:
    """(label, entry) pairs by increasing training fraction (JSON may sort the labels)."""
    return sorted(by_fraction.items(), key=lambda kv: kv[1]["fraction"])


def _acc(entry: dict, model: str, label: str) -> float:
    return entry["models"][model]["by_fraction"][label]["acc"]


def _compared(results: dict) -> list[tuple[str, dict]]:
    """(name, entry) of the data sets with both models (a `models` subset has none)."""
    return [(k, e) for k, e in results["datasets"].items()
            if {"dsl", "mlp"} <= set(e["models"])]


def targets(results: dict) -> dict:
    """The two targets of the module docstring, with the numbers behind them."""
    full, low = {}, {}
    for name, entry in _compared(results):
        fr = entry["models"]["dsl"]["by_fraction"]
        labels = {k: v["fraction"] for k, v in fr.items()}
        top = max(labels, key=labels.get)
        if labels[top] == 1.0:
            gap = _acc(entry, "dsl", top) - _acc(entry, "mlp", top)
            full[name] = target(gap >= -FULL_DATA_TOLERANCE, dsl_minus_mlp=gap)
        lows = [k for k, f in labels.items() if f <= LOW_DATA_MAX]
        if lows:
            gap = float(np.mean([_acc(entry, "dsl", k) - _acc(entry, "mlp", k) for k in lows]))
            low[name] = {"fractions": [labels[k] for k in lows], "dsl_minus_mlp": gap,
                         "ahead": bool(gap > 0)}
    out = {"full_data": target(bool(full) and all(v["met"] for v in full.values()),
                               per_dataset=full, tolerance=FULL_DATA_TOLERANCE),
           "low_data": target(bool(low) and sum(v["ahead"] for v in low.values()) * 2 > len(low),
                              per_dataset=low, max_fraction=LOW_DATA_MAX)}
    return out


def tables(results: dict) -> str:
    """Markdown: accuracy per data set × fraction (DSL vs MLP, mean ± sd over seeds), model
    sizes and line statistics, the targets, and the toy."""
    lines = ["| data set (n_train, dim, classes) | fraction (rows) | DSL acc | MLP acc | "
             "DSL − MLP |", "|---|---|---|---|---|"]
    for name, e in _compared(results):
        head = f"{name} ({e['n_train']}, {e['dim']}, {e['num_classes']})"
        for label, d in ordered(e["models"]["dsl"]["by_fraction"]):
            mlp = e["models"]["mlp"]["by_fraction"][label]
            lines.append(f"| {head} | {100 * d['fraction']:g} % ({d['n_train']}) | "
                         f"{100 * d['acc']:.1f} ± {100 * d['acc_sd']:.1f} | "
                         f"{100 * mlp['acc']:.1f} ± {100 * mlp['acc_sd']:.1f} | "
                         f"{100 * (d['acc'] - mlp['acc']):+.1f} |")
            head = ""
    selected = any("selected_step" in e["models"][k] for _, e in _compared(results)
                   for k in ("dsl", "mlp"))
    extra = " selected step DSL / MLP (mean) | validation rows |" if selected else ""
    lines += ["", "| data set | DSL params | MLP params (width) | seeds | steps | DSL train s | "
              "MLP train s | mean line length | lines exiting Ω at both ends |" + extra,
              "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if selected else "")]
    for name, e in _compared(results):
        d, m = e["models"]["dsl"], e["models"]["mlp"]
        seeds = len(next(iter(d["by_fraction"].values()))["acc_per_seed"])
        sel = (f" {d.get('selected_step', 0):.0f} / {m.get('selected_step', 0):.0f} | "
               f"{e.get('n_val', 0)} |" if selected else "")
        lines.append(f"| {name} | {d['num_params']} | {m['num_params']} ({m['width']}) | "
                     f"{seeds} | {d['steps']} | {d['train_s']:.0f} | {m['train_s']:.0f} | "
                     f"{cell(d['lines']['mean_length'], 3)} | "
                     f"{100 * d['lines']['exited_share']:.0f} % |" + sel)
    t = results.get("targets")
    if t and results["datasets"]:
        full = ", ".join(f"{k} {100 * v['dsl_minus_mlp']:+.1f}"
                         for k, v in t["full_data"]["per_dataset"].items())
        low = ", ".join(f"{k} {100 * v['dsl_minus_mlp']:+.1f}"
                        for k, v in t["low_data"]["per_dataset"].items())
        lines += ["", f"- Full data, DSL within 1 point of the MLP on every set: "
                      f"**{verdict(t['full_data'])}** (DSL − MLP, points: "
                      f"{full})."]
        if t["low_data"]["per_dataset"]:          # no line when no low-data fraction ran
            lines.append(f"- Low data (fractions ≤ {100 * LOW_DATA_MAX:g} %), DSL ahead on most "
                         f"sets: **{verdict(t['low_data'])}** (mean DSL − "
                         f"MLP, points: {low}).")
    toy = results.get("toy")
    if toy:
        lines += ["", f"- 2-D toy (two moons, {toy['n_train']} training points, "
                      f"{toy['steps']} steps): DSL test accuracy {100 * toy['test_acc']:.1f} %, "
                      f"mean line length {toy['mean_length']:.2f}, "
                      f"{100 * toy['exited_share']:.0f} % of lines exit at both ends."]
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    """The README block: the tables and the run line (config tag, selection, machine, wall
    minutes)."""
    select = ""
    if config.get("data", {}).get("val_fraction", 0) > 0:
        select = (f" (each replica's params selected at its best validation loss on "
                  f"{100 * config['data']['val_fraction']:g} % of the training rows, checked "
                  f"every {config['eval']['val_every']} steps)")
    return (f"{tables(results)}\n\nConfig `{config['tag']}`{select}; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s'] / 60:.0f} min.")


def _metrics(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def curve_plots(stages, name: str, fractions, entry: dict, plot_dir: str) -> str:
    """Training curves (batch loss per step) of DSL (solid) and MLP (dashed) per fraction,
    from the metrics.jsonl of the stages `<name>/dsl` and `<name>/mlp` (`lib.common.stages`)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for kind, style in (("dsl", "-"), ("mlp", "--")):
        rows = _metrics(os.path.join(stages.dir(f"{name}/{kind}"), "metrics.jsonl"))
        for i, f in enumerate(fractions):
            key = f"loss_f{100 * f:g}"
            pts = [(r["step"], r[key]) for r in rows if key in r]
            if pts:
                s, v = zip(*pts)
                ax.plot(s, v, style, color=f"C{i}", label=f"{kind.upper()} {100 * f:g} %")
    ax.set(xlabel="step", ylabel="training loss (batch)", yscale="log",
           title=f"{name}: learning curves")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return plotting.save(fig, os.path.join(plot_dir, f"{name}_learning_curves.png"))


def sample_efficiency_plot(results: dict, path: str) -> str:
    """Test accuracy vs training fraction, DSL and MLP, one panel per data set."""
    import matplotlib.pyplot as plt  # noqa: PLC0415
    names = list(results["datasets"])
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.3), squeeze=False)
    for ax, name in zip(axes[0], names):
        e = results["datasets"][name]
        for kind in ("dsl", "mlp"):
            fr = [d for _, d in ordered(e["models"][kind]["by_fraction"])]
            x = [d["fraction"] for d in fr]
            ax.errorbar(x, [d["acc"] for d in fr], yerr=[d["acc_sd"] for d in fr], marker="o",
                        capsize=3, label=kind.upper())
        ax.set(xscale="log", xlabel="training fraction", ylabel="test accuracy", title=name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return plotting.save(fig, path)
