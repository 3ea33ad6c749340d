"""SketchDNN results: the targets and the markdown tables (from results.json).

Targets:
    fd_beats_baselines    FD(Gaussian-Softmax) < FD(one-hot Gaussian) and < FD(D3PM)
    nll_beats_baselines   NLL bound(Gaussian-Softmax) < both baselines' bounds
    pe_does_worse         the positional-encoding ablation has a higher FD and NLL bound
Each is {"met": bool, ...numbers} or None when a needed run is missing. One training seed
per model here, so a verdict is a point comparison, not a ranking (lib/sketchdnn/seeds.py
ranks over seeds). A run's "nll" is its tightest bound (lib/sketchdnn/evaluation.py; for
Gaussian-Softmax the lower of the 2·log p̂ and Σ p̂·u parameterisations, both in the table).
"""
from __future__ import annotations

from lib.common.report import cell, machine_text, target, verdict
from lib.sketchdnn import seeds as seeds_lib
from lib.sketchdnn.names import BASELINES, GS, LABELS, PE, X0_LABELS


def targets(results: dict) -> dict:
    runs = results["runs"]
    out: dict = {"fd_beats_baselines": None, "nll_beats_baselines": None, "pe_does_worse": None}
    if GS not in runs:
        return out
    gs = runs[GS]
    if all(b in runs for b in BASELINES):
        out["fd_beats_baselines"] = target(
            all(gs["fd"] < runs[b]["fd"] for b in BASELINES),
            fd={r: runs[r]["fd"] for r in (GS, *BASELINES)})
        out["nll_beats_baselines"] = target(
            all(gs["nll"]["total"] < runs[b]["nll"]["total"] for b in BASELINES),
            nll_bits={r: runs[r]["nll"]["total"] for r in (GS, *BASELINES)})
    if PE in runs:
        pe = runs[PE]
        out["pe_does_worse"] = target(
            pe["fd"] > gs["fd"] and pe["nll"]["total"] > gs["nll"]["total"],
            fd={GS: gs["fd"], PE: pe["fd"]},
            nll_bits={GS: gs["nll"]["total"], PE: pe["nll"]["total"]})
    return out


def _met(t) -> str:
    if t is None:
        return "not run"
    return f"**{verdict(t)}** (one seed: not a ranking)"


def by_parameterisation(nll: dict) -> str:
    """'2·log p̂ 2076.1 ± 13.4 / Σ p̂·u 1037.2 ± 8.8' (the tighter in bold) or '—'."""
    by = nll.get("by_x0_logits")
    if not by:
        return "—"
    cells = []
    for name, label in X0_LABELS.items():
        if name in by:
            c = f"{label} {by[name]['total']:.2f} ± {by[name]['total_se']:.2f}"
            cells.append(f"**{c}**" if name == nll.get("x0_logits") else c)
    return " / ".join(cells)


def markdown(results: dict) -> str:
    ref = results["reference"]
    both = any(r["nll"].get("by_x0_logits") for r in results["runs"].values())
    lines = [
        ("| model | FD ↓ | precision ↑ | recall ↑ | NLL bound, bits/sketch ↓ | "
         + ("by reverse x̂₀ logits (the tighter in bold) | " if both else "")
         + "prior / diffusion / reconstruction | dangling ends ↓ | closed profiles ↑ | "
         "type TV ↓ | count TV ↓ | repaired prims | params |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if both else ""),
        (f"| held-out data (floor) | {cell(ref['fd'])} | {cell(ref['precision'])} | "
         f"{cell(ref['recall'])} | — | " + ("— | " if both else "")
         + f"— | {cell(ref['validity']['dangling_fraction'])} | "
         f"{cell(ref['validity']['closed_rate'])} | {cell(ref['type_tv'])} | "
         f"{cell(ref['count_tv'])} | — | — |")]
    for run, r in results["runs"].items():
        n, v = r["nll"], r["validity"]
        lines.append(
            f"| {LABELS.get(run, run)} | {cell(r['fd'])} | {cell(r['precision'])} | "
            f"{cell(r['recall'])} | {n['total']:.2f} ± {n['total_se']:.2f} | "
            + (f"{by_parameterisation(n)} | " if both else "")
            + f"{n['prior']:.2f} / {n['diffusion']:.2f} / {n['reconstruction']:.2f} | "
            f"{cell(v['dangling_fraction'])} | {cell(v['closed_rate'])} | {cell(r['type_tv'])} | "
            f"{cell(r['count_tv'])} | {cell(r['repaired_fraction'])} | "
            f"{r['train']['num_params']:,} |")
    t = results["targets"]
    lines += ["", "| target | result |", "|---|---|",
              (f"| Gaussian-Softmax beats one-hot Gaussian and D3PM on FD | "
               f"{_met(t['fd_beats_baselines'])} |"),
              (f"| Gaussian-Softmax beats one-hot Gaussian and D3PM on the NLL bound | "
               f"{_met(t['nll_beats_baselines'])} |"),
              (f"| positional-encoding ablation does worse (FD and NLL) | "
               f"{_met(t['pe_does_worse'])} |")]
    lines += ["", (f"Metric encoder test accuracy {results['encoder_test_accuracy']:.3f}; "
                   f"FD/precision/recall against {results['data']['num_test']} held-out sketches "
                   f"with {results['budget']['num_samples']} samples per model "
                   f"({results['budget']['sample_steps']} of T = "
                   f"{results['budget']['diffusion_steps']} reverse steps); NLL bound over the "
                   f"held-out set (± one standard error)"
                   + ("; for Gaussian-Softmax the tighter of the bounds under the two reverse "
                      "parameterisations of x̂₀'s logits (same weights, sketches and noise)"
                      if both else "") + ".")]
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    """The README block: `markdown` plus the budget and machine."""
    b = results["budget"]
    return (f"{markdown(results)}\n\nConfig `{config['tag']}`: {b['train_steps_per_model']} "
            f"training steps per model (batch {config['optim']['batch_size']}, width "
            f"{config['model']['width']}, depth {config['model']['depth']}), "
            f"{results['data']['num_train']} training sketches in "
            f"{results['data']['num_slots']} slots; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s']:.0f} s.")


RESULTS_FLAGS = {"seeds": ("list", [], "more workdirs of the same config, one per training "
                           "seed: the block and the published targets are over all seeds")}


def _seed_runs(workdir: str, more: list[str]) -> list[tuple[dict | None, dict]]:
    return [seeds_lib.load(w) for w in (workdir, *more)]


def results_block(results: dict, config: dict, workdir: str, seeds: list[str]) -> str:
    """`render` of the run, or with `seeds` the table over `workdir` and those
    (`lib.sketchdnn.seeds.render`)."""
    if not seeds:
        return render(results, config)
    return seeds_lib.render(_seed_runs(workdir, seeds), [workdir, *seeds])


def publish_results(results: dict, config: dict, workdir: str, seeds: list[str]) -> dict:
    """What `tools/results.py --publish` writes: the run's results, or with `seeds` the
    claims over all seeds as target records (`lib.sketchdnn.seeds.targets`), the workdirs
    joined and their training seeds. ValueError naming an unfinished seed workdir."""
    if not seeds:
        return results
    loaded = _seed_runs(workdir, seeds)
    for w, (r, _) in zip(seeds, loaded[1:]):
        if r is None:
            raise ValueError(f"{w}: no results.json; run experiments/sketchdnn/main.py there "
                             "to the end")
    seeds_lib.check_same_setup([c for _, c in loaded])
    all_results = [r for r, _ in loaded]
    return {"machine": results["machine"], "wall_s": sum(r["wall_s"] for r in all_results),
            "merged": ", ".join(seeds),
            "train_seeds": ", ".join(str(c["train"]["seed"]) for _, c in loaded),
            "targets": seeds_lib.targets(seeds_lib.summarise(all_results))}
