"""Targets, markdown tables and the README block (`render`) of a spurious-ridge results.json."""
from __future__ import annotations

import json

from lib.common import report


def _f(x, digits: int = 3) -> str:
    return report.cell(x, digits, "g")


def _interval(tradeoff: dict) -> str:
    interval = tradeoff["increasing_interval"]
    return "none" if interval is None else f"[{_f(interval[0])}, {_f(interval[1])}]"


def _pct(x) -> str:
    return f"{100 * x:.1f}%"


def gaussian_table(results: dict) -> str:
    g = results["gaussian"]
    head = ("| setting | n | D | max rel. err. C | max rel. err. L | plain sim: max \\|z\\| C, L "
            "| target (≤ 5%) | λ_L* | λ at max C | interval ∋ λ_L* where C increases "
            "| C increasing at λ_L* (theory / sim) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, r in g["settings"].items():
        t = r["tradeoff_theory"]
        rows.append(
            f"| {name} | {r['n']} | {r['D']} | {_pct(r['max_rel_err_C_cond'])} "
            f"| {_pct(r['max_rel_err_L_cond'])} | {r['max_abs_z_C']:.1f}, {r['max_abs_z_L']:.1f} "
            f"| {'met' if r['target_met'] else 'missed'} "
            f"| {_f(t['lambda_loss_opt'])} | {_f(t['lambda_spurious_peak'])} | {_interval(t)} "
            f"| {_f(t['spurious_increasing_at_opt'])} / "
            f"{_f(r['tradeoff_sim']['spurious_increasing_at_opt'])} |")
    foot = ("\n\nRelative error = max over the λ grid of |simulation mean − deterministic "
            "equivalent| / |deterministic equivalent|, the simulation being the label-noise-"
            "averaged ridge fits; plain sim z = (mean of the fits on noisy labels − DE) / s.e.; "
            "λ_L* and the C maximum are located on the dense theory grid.")
    return "\n".join([head, *rows]) + foot


def rf_table(results: dict) -> str:
    r = results["rf"]
    head = (f"Width sweep at λ = {_f(r['width_sweep_lambda'])} ({r['activation']}, setting "
            f"`{r['setting']}`, n = {r['n']}, D = {r['D']}, {r['num_seeds']} seeds):\n\n"
            "| p | p/n | λ̃ | C (RF) | C (linear ridge at λ̃) | C^Σ(λ̃) | L (RF) "
            "| L^Σ(λ̃) |\n"
            "|---|---|---|---|---|---|---|---|")
    rows = []
    for i, p in enumerate(r["widths"]):
        w = r["width_sweep"]
        rows.append(
            f"| {p} | {p / r['n']:.2f} | {_f(w['lam_tilde'][i])} "
            f"| {_f(w['C_rf'][i])} ± {_f(w['C_rf_se'][i], 2)} | {_f(w['C_linear'][i])} "
            f"| {_f(w['C_theory'][i])} | {_f(w['L_rf'][i])} ± {_f(w['L_rf_se'][i], 2)} "
            f"| {_f(w['L_theory'][i])} |")
    eq = r["equivalence"]
    tail = (f"\n\nEquivalence over the RF λ grid at p = {eq['width']} (p/n = "
            f"{eq['width'] / r['n']:.1f}): max relative gap C(RF) vs C(linear ridge at λ̃) "
            f"{_pct(eq['max_rel_gap_C_linear'])}, vs C^Σ(λ̃) {_pct(eq['max_rel_gap_C_theory'])}; "
            f"L(RF) vs L^Σ(λ̃) {_pct(eq['max_rel_gap_L_theory'])}. C values are label-noise "
            "averaged (fits on the clean labels), the RF ones exact given W (Stein's lemma); "
            "L(RF) is a Monte Carlo estimate on fresh test inputs.")
    return "\n".join([head, *rows]) + tail


def digits_table(results: dict) -> str:
    r = results["digits"]
    head = (f"Coloured digits ({r['colour']}, ρ = {r['rho']}, n_train = {r['n_train']}, D = 128, "
            f"{r['num_seeds']} splits):\n\n"
            "| λ | Ĉ (held-out) | C^Σ (moments) | L̂ (held-out) | L^Σ (moments) |\n|---|---|---|---|---|")
    rows = [f"| {_f(lam)} | {_f(c)} ± {_f(cs, 2)} | {_f(ct)} | {_f(l)} ± {_f(ls, 2)} | {_f(lt)} |"
            for lam, c, cs, ct, l, ls, lt in zip(r["lambdas"], r["C"], r["C_se"], r["C_theory"],
                                                 r["L"], r["L_se"], r["L_theory"])]
    t = r["tradeoff_sim"]
    mid = (f"\n\nλ_L* = {_f(t['lambda_loss_opt'])} (held-out), C increasing there: "
           f"{_f(t['spurious_increasing_at_opt'])}; λ at max Ĉ = {_f(t['lambda_spurious_peak'])}."
           f"\n\nRF at λ = {_f(r['rf_lambda'])}:\n\n| p | Ĉ | L̂ |\n|---|---|---|")
    rf_rows = [f"| {p} | {_f(c)} ± {_f(cs, 2)} | {_f(l)} ± {_f(ls, 2)} |"
               for p, c, cs, l, ls in zip(r["widths"], r["rf_C"], r["rf_C_se"], r["rf_L"],
                                          r["rf_L_se"])]
    return "\n".join([head, *rows]) + mid + "\n" + "\n".join(rf_rows)


def tables(results: dict) -> str:
    """All tables of the parts present in `results`, as one markdown string."""
    parts = []
    if "gaussian" in results:
        parts.append("### Gaussian settings: deterministic equivalents vs simulation\n\n"
                     + gaussian_table(results))
    if "rf" in results:
        parts.append("### Random features\n\n" + rf_table(results))
    if "digits" in results:
        parts.append("### Coloured digits\n\n" + digits_table(results))
    return "\n\n".join(parts)


def _tradeoff(t: dict) -> dict:
    """The trade-off target of one λ curve: C increasing at λ_L*, with λ_L* and the λ of max C."""
    return report.target(t["spurious_increasing_at_opt"], lambda_loss_opt=t["lambda_loss_opt"],
                         lambda_spurious_peak=t["lambda_spurious_peak"])


def targets(results: dict) -> dict:
    """The targets, met or missed, from the parts that ran: target records (the
    deterministic equivalents within tolerance per setting, with the errors and whether the
    target applies there; the trade-off visible, with λ_L* and the λ of max C)."""
    out = {}
    if "gaussian" in results:
        s = results["gaussian"]["settings"]
        out["de_within_tolerance"] = {
            k: report.target(v["target_met"], max_rel_err_C_cond=v["max_rel_err_C_cond"],
                             max_rel_err_L_cond=v["max_rel_err_L_cond"],
                             applies=v["target_applies"])
            for k, v in s.items()}
        out["de_target_applies"] = {k: v["target_applies"] for k, v in s.items()}
        out["tradeoff_visible_theory"] = {k: _tradeoff(v["tradeoff_theory"]) for k, v in s.items()}
        out["tradeoff_visible_sim"] = {k: _tradeoff(v["tradeoff_sim"]) for k, v in s.items()}
    if "digits" in results:
        out["tradeoff_visible_digits"] = _tradeoff(results["digits"]["tradeoff_sim"])
    return out


def render(results: dict, config: dict) -> str:
    """The README block: tables, targets, config, machine."""
    bare = report.met_tree(results["targets"])    # records as bools: the text of old results
    return (f"{tables(results)}\n\nTargets: `{json.dumps(bare)}`\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} in "
            f"{results['wall_s']:.0f} s.")
