"""Write RESULTS.md, one table of every paper's headline result, from the committed results files.

    python3 tools/results_page.py           # rewrite RESULTS.md and README.md's flagship block
    python3 tools/results_page.py --check   # exit 1 naming each stale file; write nothing

Reads only JSON (no JAX): the `experiments/<paper>/*.json` files that are committed beside each
paper's README (`tools/results.py --publish` writes a run's results_<tag>.json there, with the
README block from the same run). A target record (`lib.common.report.target`: a dict with a bool "met") gives a
row its verdict and its numbers; nothing measured is typed here. What is typed, in `PAPERS`, is
what no results file holds: the paper's claim in one line, the headline target in words, whether
the re-implementation was checked against the paper's released code, and the README headings the
row links to (a heading that is missing stops the tool with one line naming it).

A paper's row takes its numbers from the records that `Paper.sources` names (file, dotted path
in its "targets" tree); a paper without named sources summarises every record of its committed
results files ("k of n targets met"), and a paper with none says "no results file". Below the
table: every target record of every committed file, the figures, and a glossary.
README.md's block `<!-- results:flagship:begin -->` ... `end` holds the flagship's row.
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from lib.common import report  # noqa: E402  (after the path line, so the tool runs from anywhere)
from lib.common import workdir as wd  # noqa: E402

PAGE = "RESULTS.md"
README = "README.md"
README_TAG = "flagship"
FLAGSHIP = "multipdenet"
SCALES = ("quick", "official", "gpu")
CHECKED = ("yes", "peer", "no")


@dataclasses.dataclass(frozen=True)
class Source:
    """One target record: `experiments/<paper>/<file>`, its dotted path under "targets", the
    scale of the run that wrote it (one of SCALES; a file that states its "scale" must agree),
    when not the paper's, the format of its number, and, for an entry that is not a target
    record, the key of its bool verdict."""
    file: str
    path: str
    scale: str
    number: str = ""
    met: str = ""


@dataclasses.dataclass(frozen=True)
class Paper:
    """What a results file cannot say about a paper. `target` may name fields of the first
    source's record (`{bound:g}`) and `number` fields of each source's record; headings are
    README section titles (`checked_at` is `FILE#heading`, FILE under experiments/<key>/)."""
    key: str
    name: str
    claim: str
    target: str
    checked: str
    basis: str
    results: str
    checked_at: str
    number: str = ""
    sources: tuple[Source, ...] = ()
    figure: str = ""


PAPERS = (
    Paper("latent_ate", "Confounding adjustment with pre-trained representations",
          "DML on a pre-trained network's image features gives unbiased ATEs with valid "
          "intervals; naive estimates are biased",
          "DML on latent features: coverage 91–99 %, |bias| ≤ 0.1 interval half-widths",
          "yes", "`official` variant: the official code's nuisance set-up",
          "Results (quick, measured here)",
          "README.md#Official set-up (complex design, n = 1000)",
          number="bias {ratio:.2f} half-widths",
          sources=tuple(Source("results_quick.json", f"{design}/dml_mlp_logit_latent/{what}",
                               "quick", number)
                        for design in ("label", "complex")
                        for what, number in (("coverage", f"{design}: coverage {{value:.1%}}"),
                                             ("bias", "")))),
    Paper("multipdenet", "MultiPDENet (flagship)",
          "a PDE-embedded network on a coarse grid simulates flow faster than a classical "
          "solver at equal accuracy",
          "HCT ≥ {bound:g}× the tuned classical front's at equal wall time (Navier–Stokes, "
          "held-out ICs)",
          "peer", "official code not available; the solvers it is judged against agree with "
          "jax-cfd and exponax",
          "Cost–accuracy front (Navier–Stokes, Re = 1000)",
          "SOLVERS.md#Benchmark",
          number="{best_hct_over_front:.2f}×",
          sources=(Source("front.json", "floor", "quick",
                          "held-out: {best_hct_over_front:.2f}× at the median costs, "
                          "{ratio_interval_rounds[0]:.2f}–{ratio_interval_rounds[1]:.2f} over ICs at "
                          "every timed round's prices, {best_point}"),
                   Source("front_confirm.json", "floor", "quick",
                          "the best rechecked on fresh ICs: {best_hct_over_front:.2f}× "
                          "({ratio_interval_rounds[0]:.2f}–{ratio_interval_rounds[1]:.2f})")),
          figure="front.png"),
    Paper("dsl", "Deep Sturm–Liouville",
          "eigenfunctions of learned Sturm–Liouville problems along field lines are as "
          "accurate as standard networks, better in low data",
          "within 1 point of a matched MLP on every set; ahead in low data",
          "no", "official repository not reachable", "Results (measured here)",
          "README.md#What the paper claims",
          sources=tuple(Source("results_quick.json", path, "quick", label + " / ".join(
              f"{{per_dataset[{d}][dsl_minus_mlp]:+.1%}}"
              for d in ("breast_cancer", "digits", "make_classification", "wine")))
              for path, label in (
                  ("full_data", "DSL − MLP accuracy, breast cancer / digits / "
                                "make_classification / wine: full data "),
                  ("low_data", "≤ {max_fraction:.0%} of rows ")))),
    Paper("sketchdnn", "SketchDNN",
          "Gaussian-Softmax diffusion generates CAD sketches better (FID, NLL) than earlier "
          "generators",
          "Gaussian-Softmax beats one-hot Gaussian and D3PM on FD and on the NLL bound",
          "yes", "`official` variant: the official loss and sampler",
          "Results (official set-up, 3 seeds, measured here)",
          "README.md#Results (official set-up, 3 seeds, measured here)",
          sources=(Source("results_official.json", "fd_beats_baselines", "official",
                          "FD: {verdict} (3 seeds)"),
                   Source("results_official.json", "nll_beats_baselines", "official",
                          "NLL bound: {verdict}"))),
    Paper("editlord", "EditLord",
          "learned code-transformation rules make LM code editing better and more robust",
          "rules recovered (precision, recall ≥ 0.8); +spec+rules beats the base editor on "
          "held-out tests",
          "no", "design from the repository's Algorithm 1; no run compared", "Results (quick)",
          "README.md#How it differs from the paper",
          number="{detail}",
          sources=(Source("results_quick_abstract.json", "rule_recovery", "quick",
                          "rules: {detail}"),
                   Source("results_quick_abstract.json", "rules_beat_base", "quick"))),
    Paper("kar_peak", "KAR / PEAK kernel alignment for INRs",
          "kernel alignment (KAR) and a learned encoding (PEAK) make INRs inpaint images "
          "better",
          "PEAK+KAR above the best baseline's PSNR in every inpainting cell, ≥ 1 dB on average",
          "no", "the repository holds no code", "Results (measured here)",
          "README.md#Deviations from the paper",
          sources=(Source("results_quick.json", "psnr_beats_best_baseline_every_cell", "quick",
                          "above the best baseline in {value} cells"),
                   Source("results_quick.json", "mean_margin_at_least_1dB", "quick",
                          "mean margin {value:+.2f} dB"))),
    Paper("risk_irl", "Learning utilities from demonstrations (risk-sensitive IRL)",
          "a risk-sensitive utility can be tested (CATY-UL) and learned (TRACTOR-UL) from "
          "demonstrations",
          "TRACTOR-UL's (non)compatibility falls to ≤ 1/3 of its start",
          "yes", "participant 9 against the repository's stored runs",
          "Results (measured here)",
          "README.md#Investment MDP, the 15 participants",
          sources=(Source("results_quick.json", "participant_third", "quick",
                          "participant 9: {n_met} of {n} starts"),
                   Source("results_quick.json", "investment_third", "quick",
                          "investment experts: {n_met} of {n}"),
                   Source("results_quick.json", "random_third", "quick",
                          "random MDPs: {n_met} of {n} sizes"),
                   Source("results_quick.json", "multi_env_third", "quick",
                          "multi-environment: {n_met} of {n}"))),
    Paper("fleg3d", "3D-FLEG",
          "geometric features embedded in the text space improve few-shot "
          "class-incremental point-cloud learning",
          "beats every baseline in last-session and harmonic accuracy; each module helps",
          "no", "code not released", "Results (quick, measured here)",
          "README.md#Deviations from the paper",
          number="harmonic {ours:.1%} vs {best:.1%}",
          sources=tuple(Source("results_quick.json", f"{protocol}.{path}", "quick", number)
                        for protocol in ("cross_domain", "same_domain")
                        for path, number in (
                            ("beats_baselines_last_acc",
                             protocol.replace("_", "-") + ": last {ours:.1%} vs best "
                             "baseline {best:.1%}"),
                            ("beats_baselines_last_harmonic", ""),
                            ("ablations_cost_accuracy", "{n_met} of {n} ablations below")))),
    Paper("dynamic_detr", "Dynamic DETR (dynamic token aggregation)",
          "per-level dynamic token density with aggregation beats fixed-ratio "
          "sparsification at equal encoder cost",
          "AP ≥ top-k's at every budget; dense AP at ≥ 30 % fewer encoder FLOPs",
          "no", "code not released", "Results (cpu_long): the regime in which the targets "
          "are judged", "README.md#How it differs from the paper"),
    Paper("cades", "CADES",
          "conformal tests on a point process's rescaled times control the false positive "
          "rate and beat KS/3S in AUROC",
          "FPR ≤ α + 3 SE; AUROC ≥ the best baseline in every family",
          "yes", "the official families, baselines and plots",
          "Results (quick, measured here)",
          "README.md#Results (official set-up, measured here)",
          sources=(Source("results_quick.json", "fpr_within_alpha_plus_3se", "quick",
                          "worst FPR {worst[excess_in_se]:+.1f} SE from α"),
                   Source("results_quick.json", "auroc_vs_best_baselines", "quick",
                          "AUROC − best baseline {mean_diff:+.3f} (mean over {families} "
                          "families)", met="per_family_met"))),
    Paper("swe_gym", "SWE-Gym",
          "fine-tuning an agent on its own resolved trajectories, and a verifier for Best@K, "
          "raise resolve rates",
          "fine-tuning raises the held-out resolve rate; Best@K above Pass@1",
          "no", "SWE-bench format as released; no run compared",
          "Results measured here (quick)", "README.md#How it differs from the paper"),
    Paper("maxentdp", "MaxEntDP",
          "a diffusion policy trained towards exp(Q/α) beats SAC and reaches every goal of "
          "a multi-goal task",
          "multi-goal task: every seed reaches all 4 goals, SAC fewer on average",
          "yes", "`official` multi-goal set-up from the official code", "Results",
          "README.md#Results",
          sources=(Source("results_official_multigoal.json", "multigoal_all_goals", "official",
                          "goals reached per seed: {maxentdp_distinct_goals} vs SAC "
                          "{sac_distinct_goals}"),)),
    Paper("gmflow", "GMFlow",
          "a Gaussian-mixture velocity gives good few-step samples and guidance without "
          "CFG's over-saturation",
          "K = 64 at 4 steps ≤ flow matching at 32; probabilistic guidance reaches CFG's "
          "best precision",
          "no", "no run compared with the official code", "Results (quick, measured here)",
          "README.md#Deviations from the paper",
          sources=(Source("results_quick.json", "toy.gm64_nfe4_vs_fm_nfe32", "quick",
                          "checkerboard SWD: K = 64 at 4 steps {gm64_nfe4:.3f} vs flow matching "
                          "at 32 {fm_nfe32:.3f}"),
                   Source("results_quick.json", "digits", "quick",
                          "guidance at CFG's best precision: {n_met} of {n} NFEs"))),
    Paper("earth", "EARTH",
          "an epidemic-mechanism neural ODE with a learned transmission graph beats the "
          "baselines in RMSE",
          "RMSE ≤ EpiGNN's at every horizon under EpiGNN's protocol",
          "yes", "the released code's protocol and EpiGNN's split",
          "Results (measured here)",
          "README.md#EARTH vs EpiGNN under EpiGNN's protocol (`official`)",
          sources=(Source("results_official_dynamics_us_regions.json",
                          "us_regions.at_or_below_epignn", "official",
                          "US-Regions h = 5/10/15, released dynamics, 3 seeds: worst "
                          "EpiGNN − EARTH RMSE {min_margin:.0f}"),
                   Source("results_official_dynamics_japan.json", "japan.at_or_below_epignn",
                          "official", "Japan, the same: worst EpiGNN − EARTH RMSE "
                          "{min_margin:.0f}"))),
    Paper("spurious_ridge", "Spurious correlations in high-dimensional ridge regression",
          "ridge's spurious correlation follows a deterministic equivalent; the loss-optimal "
          "λ lies where it increases",
          "deterministic equivalents within 5 % of simulation; the trade-off holds",
          "no", "no official code found", "Targets", "README.md#Deviations from the paper",
          number="trade-off in {n_met} of {n} (simulation)",
          sources=(Source("results_quick.json", "de_within_tolerance", "quick",
                          "DE within 5 % in {n_met} of {n} settings"),
                   Source("results_quick.json", "tradeoff_visible_theory", "quick",
                          "trade-off in {n_met} of {n} (theory)"),
                   Source("results_quick.json", "tradeoff_visible_sim", "quick"))),
    Paper("adam_abc", "Convergence of Adam (ABC inequality)",
          "Adam converges like SGD, O(1/√T), under L-smoothness and the ABC inequality",
          "rate slopes within ±0.1 of −1/2", "no", "paper text and code not available",
          "Results (quick config, measured here)", "README.md#Deviations from the paper",
          number="{n_met} of {n} slopes within ±0.1",
          sources=(Source("results_quick.json", "rate.slope_within_tolerance", "quick"),
                   Source("results_quick.json", "rate.adam_matches_sgd", "quick",
                          "Adam's within ±0.1 of SGD's in {n_met} of {n}"))),
    Paper("anova_tpnn", "ANOVA-TPNN",
          "tensor-product networks with a unique functional-ANOVA decomposition give stable "
          "components at comparable accuracy",
          "components recovered better than NA²M/NB²M; ≥ 2× as stable; accuracy within 5 %",
          "yes", "`official`: the official code's budget and purification",
          "Official protocol, purified components",
          "README.md#Official protocol, purified components",
          sources=tuple(Source("results_official.json",
                               f"stability_purified_signal.per_set.synth_reg/{mode}", "official",
                               f"{mode}s: {{ratios[nam]:.1f}}× / {{ratios[nbm]:.1f}}× NA²M / "
                               "NB²M (purified, signal components)")
                        for mode in ("seed", "resample"))
          + (Source("results_official.json", "recovery_purified.per_set.synth_reg", "official",
                    "purified recovery {tpnn:.3f} vs {nam:.3f} / {nbm:.3f}"),
             Source("results_official.json", "prediction.per_set.synth_reg", "official",
                    "RMSE {gap:+.1%} vs {best}"))),
    Paper("cl_similarity", "Similarities of embeddings in contrastive learning",
          "small batches over-separate negatives; a variance-reducing loss fixes it and "
          "improves small-batch accuracy",
          "closed forms match; VRNS lowers the negatives' variance and lifts the probe at "
          "B ≤ 64",
          "no", "closed forms checked; no run compared with the official code",
          "Results (quick, measured here)", "README.md#Deviations from the paper"),
    Paper("jetts", "JETTS",
          "LLM judges match outcome reward models in reranking, lose to process reward models "
          "in beam search",
          "PRM beats ORM and judges in beam search; reranking beats greedy for every "
          "better-than-chance judge",
          "no", "no run compared with the official code", "Results measured here (quick)",
          "README.md#How it differs from the paper",
          sources=(Source("results_quick.json", "prm_beats_orm_and_judges_in_beam", "quick",
                          "beam search: PRM best at {prm:.1f} %, intervals apart: {significant}",
                          met="significant"),
                   Source("results_quick.json", "better_than_chance_rerank_beats_greedy", "quick",
                          "reranking beats greedy for every better-than-chance judge"))),
)

GLOSSARY = """\
- **HCT** (high-correlation time): how long a rollout's Pearson correlation with the fine-grid
  truth stays at or above 0.8, in the system's time units.
- **front** (cost–accuracy front): for every wall-time budget, the best HCT that any classical
  solver setting (four families: the workspace's pseudo-spectral ETDRK4 and FD4 + RK4, FD4 + RK4
  with a hyperviscosity and a dispersion correction tuned on the ICs the models were chosen on,
  and jax-cfd's pseudo-spectral Crank–Nicolson/RK4; 32²–128² grids, each over its time step)
  reaches within it, on initial conditions no model was trained or chosen on. A learned model
  is compared with the front at its own wall time: "0.98×" means 98 % of the front's HCT.
- **statistics front**: the same for the error of long-run statistics (the energy spectrum's
  log L2 error over shells k ≤ 16, after the HCT horizon, against the 256² truth's).
- **pinned**: the timed process is bound to one CPU core with XLA single-threaded, so the learned
  and the classical points are timed alike and other load on the machine does not move them.
- **settled**: the 95 % bootstrap interval over initial conditions and every timed round lie
  on the same side of the target's bound.
- **scale**: *quick*, a reduced-scale run on CPU (a `quick` config, or a CPU benchmark at reduced
  grids such as the front); *official*, the official code's protocol or budget; *gpu*, a run on
  one accelerator.
- **verdict**: *met* / *missed*, the `met` of the target record(s) in the committed results
  file(s) (a row over several records is met only when all are); *not run*, the record is there
  but was not evaluated; *no results file*, nothing under `experiments/<paper>/` holds the paper's
  results, so this page shows no number: the README's measured tables come from runs whose
  `results.json` is not committed.
- **checked against official code**: *yes*, a run follows the paper's released code's set-up or
  is compared with its outputs; *peer*, the released code was not available, and what the claim
  is judged against agrees with an independent implementation; *no*, neither (the reason is in
  the cell). The word links to the README section that says so."""


@dataclasses.dataclass(frozen=True)
class Row:
    paper: Paper
    target: str
    number: str
    scale: str
    verdict: str


def slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(text: str) -> list[str]:
    """The ATX headings of a markdown text, outside fenced code blocks, in order."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
    return out


def link(root: str, path: str, heading: str) -> str:
    """`path#anchor` of `heading` in the markdown file `path` (relative to `root`), with
    GitHub's -1, -2 suffixes for repeated headings; ValueError naming both when absent."""
    with open(os.path.join(root, path)) as f:
        found = headings(f.read())
    seen: dict[str, int] = {}
    for h in found:
        base = slug(h)
        anchor = base if base not in seen else f"{base}-{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        if h == heading:
            return f"{path}#{anchor}"
    raise ValueError(f"{path}: no heading {heading!r}")


def read(root: str, path: str) -> dict:
    """The JSON object at `root/path`; ValueError naming the file when it is unreadable."""
    try:
        results = wd.read_json(os.path.join(root, path))
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot read {path}: {' '.join(str(err).split())}") from None
    if not isinstance(results, dict):
        raise ValueError(f"cannot read {path}: not a JSON object")
    return results


def committed(root: str, key: str) -> list[str]:
    """The paper's results files: `experiments/<key>/*.json` holding a "targets" tree or named
    results*.json, as paths relative to `root`, sorted."""
    out = []
    for path in sorted(glob.glob(os.path.join(root, "experiments", key, "*.json"))):
        rel = os.path.relpath(path, root)
        if os.path.basename(path).startswith("results") or "targets" in read(root, rel):
            out.append(rel)
    return out


def records(results: dict) -> list[tuple[str, dict]]:
    """The target records of a results file's "targets" tree that no other record holds."""
    walked = report.walk_targets(results.get("targets") or {})
    paths = [p for p, _ in walked]
    return [(p, r) for p, r in walked
            if not any(p.startswith(q + ".") for q in paths if q != p)]


def record(root: str, key: str, source: Source) -> dict:
    """The record `source` names. An entry that is not a record gets "met" from the bool
    `source.met` names; a path that names a subtree of records stands for all of them:
    {"n": how many, "n_met": how many met, "met": all met} over its outermost records.
    ValueError naming the file and the path when there is none, or when the file states a
    scale other than the source's."""
    path = os.path.join("experiments", key, source.file)
    results = read(root, path)
    if results.get("scale", source.scale) != source.scale:
        raise ValueError(f"{path}: scale {results['scale']!r}, but PAPERS says {source.scale!r}")
    found = dict(report.walk_targets(results.get("targets") or {}))
    if source.path in found:
        return found[source.path]
    if source.met:
        entry = results.get("targets") or {}
        for key in source.path.split("."):
            entry = entry.get(key) if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get(source.met), bool):
            raise ValueError(f"{path}: no bool {source.met!r} at {source.path!r} under "
                             "\"targets\"")
        return {**entry, "met": entry[source.met]}
    under = [r for p, r in records(results) if p.startswith(source.path + ".")]
    if not under:
        raise ValueError(f"{path}: no target record at {source.path!r} under \"targets\"")
    mets = [report.met_of(r) for r in under]
    return {"n": len(mets), "n_met": sum(mets), "met": all(mets)}


def scale_of(root: str, path: str) -> str:
    """The scale a results file states (its "scale", as tools/results.py --publish writes it),
    else the one its name states (results_<scale>.json), else "quick"."""
    stated = read(root, path).get("scale")
    if stated in SCALES:
        return stated
    stem = os.path.splitext(os.path.basename(path))[0]
    named = stem.split("_", 1)[1] if "_" in stem else ""
    return named if named in SCALES else "quick"


def verdict(mets: list) -> str:
    if not mets:
        return "no results file"
    if any(m is None for m in mets):
        return "not run"
    return "met" if all(mets) else "missed"


def row(root: str, paper: Paper) -> Row:
    """A paper's row: from its named sources, else from all its committed records."""
    if paper.sources:
        recs = [record(root, paper.key, s) for s in paper.sources]
        numbers = [f"[{(s.number or paper.number).format(**r)}]"
                   f"(experiments/{paper.key}/{s.file})" for s, r in zip(paper.sources, recs)]
        scales = sorted({s.scale for s in paper.sources}, key=SCALES.index)
        files = {s.file for s in paper.sources}
        runs = f" ({len(files)} runs)" if len(files) > 1 else ""
        return Row(paper, paper.target.format(**recs[0]), " · ".join(numbers) + runs,
                   " / ".join(scales), verdict([report.met_of(r) for r in recs]))
    files = [(p, records(read(root, p))) for p in committed(root, paper.key)]
    recs = [r for _, rs in files for _, r in rs]
    if not recs:
        return Row(paper, paper.target, "—", "—", "no results file")
    mets = [report.met_of(r) for r in recs]
    scales = sorted({scale_of(root, p) for p, rs in files if rs}, key=SCALES.index)
    return Row(paper, paper.target, f"{sum(m is True for m in mets)} of {len(mets)} targets met",
               " / ".join(scales), verdict(mets))


def readme(paper: Paper) -> str:
    return f"experiments/{paper.key}/README.md"


def esc(text: str) -> str:
    """`text` for a markdown table cell (a '|' would end the cell)."""
    return text.replace("|", "\\|")


def table(root: str, rows: list[Row]) -> str:
    out = ["| paper | claim | target | our number | scale | verdict | checked against official "
           "code |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r.paper
        file, heading = p.checked_at.split("#", 1)
        checked = link(root, f"experiments/{p.key}/{file}", heading)
        out.append(f"| [{esc(p.name)}]({link(root, readme(p), p.results)}) | {esc(p.claim)} | "
                   f"{esc(r.target)} | {r.number} | {r.scale} | **{r.verdict}** | "
                   f"[{p.checked}]({checked}): {esc(p.basis)} |")
    return "\n".join(out)


def cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def all_records(root: str) -> tuple[str, list[str]]:
    """The table of every top-level record of every committed file, and the files without one."""
    out = ["| paper | file | target | verdict | measured |", "|---|---|---|---|---|"]
    bare = []
    for paper in PAPERS:
        for path in committed(root, paper.key):
            recs = records(read(root, path))
            if not recs:
                bare.append(path)
            for dotted, rec in recs:
                measured = esc(", ".join(f"{k} {cell(v)}" for k, v in rec.items()
                                         if k != "met" and not isinstance(v, (dict, list))))
                out.append(f"| {paper.name} | [{os.path.basename(path)}]({path}) | `{dotted}` | "
                           f"{verdict([report.met_of(rec)])} | {measured} |")
    return "\n".join(out), bare


def figures(root: str) -> tuple[list[tuple[Paper, str]], list[Paper]]:
    """(paper, figure path) for each paper with a committed figure, and the papers without."""
    shown, none = [], []
    for paper in PAPERS:
        pngs = sorted(glob.glob(os.path.join(root, "experiments", paper.key, "*.png")))
        name = paper.figure or (os.path.basename(pngs[0]) if pngs else "")
        if name and os.path.exists(os.path.join(root, "experiments", paper.key, name)):
            shown.append((paper, f"experiments/{paper.key}/{name}"))
        else:
            none.append(paper)
    return shown, none


def caption(root: str, figure: str) -> str:
    """", <title>" from the results file beside `figure` (same name, .json), else ""."""
    path = os.path.splitext(figure)[0] + ".json"
    title = read(root, path).get("title") if os.path.exists(os.path.join(root, path)) else None
    return f", {title}" if isinstance(title, str) else ""


def render(root: str = ROOT) -> tuple[str, str]:
    """(RESULTS.md's text, README.md's flagship block)."""
    for paper in PAPERS:
        if paper.checked not in CHECKED or any(s.scale not in SCALES for s in paper.sources):
            raise ValueError(f"{paper.key}: checked must be one of {CHECKED} and every "
                             f"source's scale one of {SCALES}")
    rows = [row(root, p) for p in PAPERS]
    counts = {v: sum(r.verdict == v for r in rows) for v in ("met", "missed", "not run",
                                                           "no results file")}
    records_table, bare = all_records(root)
    shown, none = figures(root)
    flagship = next(r for r in rows if r.paper.key == FLAGSHIP)
    lines = [
        "# Results",
        "",
        "<!-- Generated by tools/results_page.py from the committed results files; "
        "do not edit by hand. -->",
        "",
        f"One row per paper: its headline claim, the target the workspace judges it by, our "
        f"number and the verdict. Numbers and verdicts are read from the results files "
        f"committed under `experiments/` (their target records), never typed. Words in the "
        f"table are defined in the [glossary](#glossary) below it; each paper's name links to "
        f"the README section with its measured tables. Rows: {len(rows)}; verdicts: "
        + ", ".join(f"{v} {n}" for v, n in counts.items()) + "."
        + (f" The {counts['no results file']} papers marked *no results file* were run: their "
           f"READMEs hold measured tables and verdicts, but the runs' `results.json` files are "
           f"not committed, so this page cannot check them and shows no number."
           if counts["no results file"] else ""),
        "",
        table(root, rows),
        "",
        "## Glossary",
        "",
        GLOSSARY,
        "",
        "## Every target record in the committed results files",
        "",
        records_table,
        "",
        "Committed results files without target records: "
        + (", ".join(f"[{p}]({p})" for p in bare) if bare else "none") + ".",
        "",
        "## Figures",
        "",
    ]
    for paper, path in shown:
        lines += [f"**{paper.name}** ([README]({readme(paper)})): `{os.path.basename(path)}`"
                  f"{caption(root, path)}", "", f"![{paper.name}]({path})", ""]
    lines.append("No committed figure for: " + ", ".join(p.name for p in none)
                 + " (each run writes its plots into its workdir's `plots/`)." if none
                 else "Every paper has a committed figure.")
    block = "\n".join([
        f"The flagship's headline result, read from the committed results files (all "
        f"{len(rows)} papers: [{PAGE}]({PAGE}); *front* and *HCT* are defined in its "
        f"[glossary]({PAGE}#glossary)):",
        "",
        table(root, [flagship]),
    ])
    return "\n".join(lines) + "\n", block


def current_block(root: str) -> str | None:
    """The text of README.md's flagship block, None when the markers are absent."""
    with open(os.path.join(root, README)) as f:
        text = f.read()
    m = re.search(rf"<!-- results:{README_TAG}:begin -->\n(.*?)\n<!-- results:{README_TAG}:end -->",
                  text, flags=re.S)
    return m.group(1) if m else None


def stale(root: str = ROOT) -> list[str]:
    """The files whose generated text differs from what `render` gives now."""
    page, block = render(root)
    out = []
    path = os.path.join(root, PAGE)
    if not os.path.exists(path) or open(path).read() != page:
        out.append(PAGE)
    if current_block(root) != block:
        out.append(README)
    return out


def write(root: str = ROOT) -> None:
    page, block = render(root)
    wd.write_text_atomic(os.path.join(root, PAGE), page)
    report.splice(os.path.join(root, README), README_TAG, block)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when RESULTS.md or README.md's flagship block is stale")
    args = parser.parse_args(argv)
    try:
        if args.check:
            names = stale()
            for name in names:
                print(f"results_page: {name} is stale; run python3 tools/results_page.py",
                      file=sys.stderr)
            return 1 if names else 0
        write()
    except ValueError as err:
        print(f"results_page: {err}", file=sys.stderr)
        return 2
    print(f"wrote {PAGE} and the {README_TAG} block of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
