"""3D-FLEG's results tables and target checks (from results.json's dict).

Targets: in each protocol, 3D-FLEG's last-session accuracy and harmonic
accuracy beat every baseline (fine-tuning, NCM prototypes, text zero-shot, FILP-3D-like),
and removing either module (extraction, embedding) costs last-session accuracy.
"""
from __future__ import annotations

from lib.common.report import cell, machine_text, target, verdict

BASELINES = ("fine-tuning", "NCM prototypes", "text zero-shot", "FILP-3D-like")
ABLATIONS = ("w/o extraction", "w/o embedding")
ORDER = ("3D-FLEG",) + ABLATIONS + ("w/o alignment loss",) + BASELINES[::-1]


def targets(results: dict) -> dict:
    """Per protocol the target records of the module docstring (3D-FLEG's last accuracy and
    last harmonic against the best baseline's, and against each ablation's last accuracy),
    with the best baseline as [value, name] beside them as before."""
    out = {}
    for pname, by in results["protocols"].items():
        ours = by["3D-FLEG"]
        best = {k: max((by[b][k], b) for b in BASELINES) for k in ("last_acc", "last_harmonic")}
        out[pname] = {
            "beats_baselines_last_acc": target(ours["last_acc"] > best["last_acc"][0],
                                               ours=ours["last_acc"], best=best["last_acc"][0]),
            "best_baseline_last_acc": list(best["last_acc"]),
            "beats_baselines_last_harmonic": target(
                ours["last_harmonic"] > best["last_harmonic"][0], ours=ours["last_harmonic"],
                best=best["last_harmonic"][0]),
            "best_baseline_last_harmonic": list(best["last_harmonic"]),
            "ablations_cost_accuracy": {
                a: target(ours["last_acc"] > by[a]["last_acc"], ours=ours["last_acc"],
                          ablation=by[a]["last_acc"]) for a in ABLATIONS if a in by},
        }
    return out


def _pct(x):
    return cell(None if x is None else 100 * x, 1, "f")


def tables(results: dict) -> str:
    lines = []
    for pname, by in results["protocols"].items():
        n = len(next(iter(by.values()))["acc"])
        lines += [f"**{pname}** — accuracy (%) over all seen classes after each session "
                  "(mean over support draws; sd last = its standard deviation over the draws in the last "
                  "session), last-session old/new/harmonic, relative drop Δ",
                  "",
                  "| method | " + " | ".join(f"S{i}" for i in range(n))
                  + " | sd last | A_old | A_new | A_h (last) | mean A_h | Δ % |",
                  "|---|" + "---|" * (n + 6)]
        for name in sorted(by, key=lambda m: ORDER.index(m) if m in ORDER else len(ORDER)):
            s = by[name]
            lines.append(f"| {name} | " + " | ".join(_pct(a) for a in s["acc"])
                         + f" | {_pct(s['acc_std'][-1])} | {_pct(s['acc_old'][-1])} | {_pct(s['acc_new'][-1])} | "
                         f"{_pct(s['last_harmonic'])} | {_pct(s['mean_harmonic'])} | "
                         f"{cell(s['drop'], 1, 'f')} |")
        t = results["targets"][pname]
        lines += ["", f"Targets ({pname}): last accuracy beats every baseline: "
                  f"{verdict(t['beats_baselines_last_acc'])} (best baseline "
                  f"{t['best_baseline_last_acc'][1]} {_pct(t['best_baseline_last_acc'][0])}); "
                  f"last harmonic beats every baseline: "
                  f"{verdict(t['beats_baselines_last_harmonic'])} (best baseline "
                  f"{t['best_baseline_last_harmonic'][1]} "
                  f"{_pct(t['best_baseline_last_harmonic'][0])}); removing a module costs "
                  "accuracy: " + ", ".join(f"{a} {verdict(v)}"
                                           for a, v in t["ablations_cost_accuracy"].items()), ""]
    return "\n".join(lines)


def data_text(results: dict, config: dict) -> str:
    """Where the clouds came from, for a real-data run ("" for procedural data)."""
    source = results.get("data", {}).get("source", "procedural")
    if source == "procedural":
        return ""
    cross = (f", ScanObjectNN files at `{config['data']['cross_path']}` for the cross-domain "
             "sessions" if "cross_domain" in results["protocols"] else "")
    return f"{source} files at `{config['data']['path']}`{cross}; "


def render(results: dict, config: dict) -> str:
    """The README block: tables, data, config, machine, plots."""
    train_min = sum(t["wall_s"] for t in results["train"].values()) / 60
    plots = ", ".join(f"`plots/{p}_{k}.png`" for p in results["protocols"] for k in ("acc", "harmonic"))
    return (f"{tables(results)}\n\nConfig `{config['tag']}` ({data_text(results, config)}"
            f"{results['num_clouds']} clouds, "
            f"descriptor dim {results['descriptor_dim']}, {config['eval']['repeats']} support "
            f"draws); measured on {machine_text(results['machine'])} in "
            f"{results['wall_s'] / 60:.0f} min ({train_min:.0f} min training "
            f"{len(results['train'])} networks). Per-session curves in the workdir: {plots}.")
