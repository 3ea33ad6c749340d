"""The targets, markdown tables and README block (`render`) of a cl_similarity run's results.json."""
from __future__ import annotations

from lib.common import report


def _f(x, digits: int = 4) -> str:
    return report.cell(x, digits, "g")


def _e(x) -> str:
    return f"{x:.1e}"


def theory_tables(th: dict) -> str:
    n = th["n"]
    head = (f"Full batch, n = {n}, d = {th['d']}, {th['steps']} Adam steps (threshold −1/(n−1) = "
            f"{th['threshold']:.5f}):\n\n"
            "| loss / negatives | p (free) | p (closed form) | q (free) | q (closed form) "
            "| max abs. error | max of p − (1 + q + 1/(n−1)) on the trajectory |\n"
            "|---|---|---|---|---|---|---|")
    rows = [f"| {k} | {v['pos']:.6f} | {v['pos_theory']:.6f} | {v['neg']:.6f} "
            f"| {v['neg_theory']:.6f} | {_e(v['err'])} | {v['thm52_max_violation']:.3g} |"
            for k, v in th["full_batch"].items()]
    s = th["siglip_sweep"]
    sweep = ("\n\nSigLIP bias sweep (t as configured; 'excessive' = Eq. (10) holds): cross-view "
             "negatives only vs with within-view negatives:\n\n"
             "| b | Eq. (10) | p (free) | p* | q (free) | q* | p, q with within-view |\n"
             "|---|---|---|---|---|---|---|")
    srows = [f"| {b:g} | {_f(x)} | {p:.5f} | {pt:.5f} | {q:.5f} | {qt:.5f} | {pw:.5f}, {qw:.5f} |"
             for b, x, p, pt, q, qt, pw, qw in zip(s["biases"], s["excessive"], s["pos"],
                                                   s["pos_theory"], s["neg"], s["neg_theory"],
                                                   s["pos_within"], s["neg_within"])]
    mb = th["minibatch"]
    mini = ("\n\nFixed mini-batches (Thm 5.5), Var[s_neg] over all n(n−1) cross-view pairs:\n\n"
            "| m | lower bound | upper bound | Var (free) | in bounds | E[s_neg] (free) "
            "| Var with VRNS | E[s_neg] with VRNS |\n|---|---|---|---|---|---|---|---|")
    mrows = [f"| {m} | {lo:.3e} | {hi:.3e} | {v:.3e} | {_f(ok)} | {q:.5f} | {va:.3e} | {qa:.5f} |"
             for m, lo, hi, v, ok, q, va, qa in zip(mb["batch_sizes"], mb["lower"], mb["upper"],
                                                    mb["var"], mb["in_bounds"], mb["neg_mean"],
                                                    mb["var_vrns"], mb["neg_mean_vrns"])]
    foot = (f"\n\nMax error vs closed form: full batch {_e(th['max_err_full_batch'])}, SigLIP "
            f"sweep {_e(th['max_err_siglip_sweep'])}; largest Thm 5.2 slack violation over all "
            f"trajectories {th['thm52_max_violation']:.3g} (≤ 0: the bound holds).")
    return "\n".join([head, *rows]) + sweep + "\n" + "\n".join(srows) + mini + "\n" + \
        "\n".join(mrows) + foot


def ssl_table(name: str, block: dict) -> str:
    base = {r["batch_size"]: r for r in block["runs"] if not r["aux"]}
    aux = {r["batch_size"]: r for r in block["runs"] if r["aux"]}
    shape = "×".join(str(s) for s in block["image_shape"][:2])
    head = (f"{name}: {block['num_train']} training / {block['num_test']} test images of "
            f"{shape}; Var and means from the test set's two-view embeddings:\n\n"
            "| batch | steps | Var[s_neg] | + VRNS | drop | E[s_neg] | + VRNS | E[s_pos] | + VRNS "
            "| probe acc. | + VRNS | Δ acc. | train s (both) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for b in sorted(base):
        r, a = base[b], aux.get(b)
        if a is None:
            continue
        rows.append(
            f"| {b} | {r['steps']} | {r['neg_var']:.4f} | {a['neg_var']:.4f} "
            f"| {_f(a['neg_var'] < r['neg_var'])} | {r['neg_mean']:.4f} | {a['neg_mean']:.4f} "
            f"| {r['pos_mean']:.3f} | {a['pos_mean']:.3f} | {100 * r['probe_test_acc']:.2f}% "
            f"| {100 * a['probe_test_acc']:.2f}% "
            f"| {100 * (a['probe_test_acc'] - r['probe_test_acc']):+.2f} "
            f"| {r['train_s'] + a['train_s']:.0f} |")
    accs = [r["probe_test_acc"] for r in block["runs"]]
    p = sum(accs) / len(accs)
    se = 100 * (p * (1 - p) / block["num_test"]) ** 0.5
    foot = (f"\n\nOne seed per cell: the binomial standard error of one accuracy on "
            f"{block['num_test']} test images is about {se:.1f} points, so a Δ of that size "
            "is within noise.")
    return "\n".join([head, *rows]) + foot


def tables(results: dict) -> str:
    """All tables of the parts present in `results`, as one markdown string."""
    parts = []
    if "theory" in results:
        parts.append("### Free embeddings vs closed forms\n\n" + theory_tables(results["theory"]))
    for name, block in results.get("ssl", {}).items():
        parts.append(f"### SimCLR ± VRNS on {name}\n\n" + ssl_table(name, block))
    return "\n\n".join(parts)


def targets(results: dict, config) -> dict:
    """The targets, met or missed, from the parts that ran: target records with the
    numbers behind each (per-batch lists in the order of the runs)."""
    out = {}
    if "theory" in results:
        th = results["theory"]
        tol = config.theory.tolerance
        mb = th["minibatch"]
        out["free_embeddings_match_closed_form"] = report.target(
            th["max_err_full_batch"] <= tol and th["max_err_siglip_sweep"] <= tol,
            max_err_full_batch=th["max_err_full_batch"],
            max_err_siglip_sweep=th["max_err_siglip_sweep"], tolerance=tol)
        out["thm52_holds_on_trajectories"] = report.target(
            th["thm52_max_violation"] <= 1e-6, max_violation=th["thm52_max_violation"],
            tolerance=1e-6)
        out["minibatch_variance_in_thm55_bounds"] = report.target(
            all(mb["in_bounds"]), batch_sizes=list(mb["batch_sizes"]),
            in_bounds=list(mb["in_bounds"]))
        out["minibatch_vrns_lowers_variance"] = report.target(
            all(a < b for a, b in zip(mb["var_vrns"], mb["var"])),
            batch_sizes=list(mb["batch_sizes"]), var=list(mb["var"]), var_vrns=list(mb["var_vrns"]))
    if "ssl" in results:
        for name, block in results["ssl"].items():
            base = {r["batch_size"]: r for r in block["runs"] if not r["aux"]}
            aux = {r["batch_size"]: r for r in block["runs"] if r["aux"]}
            out[f"{name}_variance_drops_every_batch"] = report.target(
                all(aux[b]["neg_var"] < base[b]["neg_var"] for b in base),
                batch_sizes=list(base), neg_var=[base[b]["neg_var"] for b in base],
                neg_var_vrns=[aux[b]["neg_var"] for b in base])
            small = [b for b in base if b <= 64]
            out[f"{name}_probe_improves_batch_le_64"] = report.target(
                bool(small) and all(aux[b]["probe_test_acc"] > base[b]["probe_test_acc"]
                                    for b in small),
                batch_sizes=small, probe_acc=[base[b]["probe_test_acc"] for b in small],
                probe_acc_vrns=[aux[b]["probe_test_acc"] for b in small])
    return out


def render(results: dict, config: dict) -> str:
    """The README block: tables, targets, config, machine."""
    targets = "\n".join(f"- `{k}`: **{report.verdict(v)}**"
                        for k, v in results["targets"].items())
    ssl_cfg = config["ssl"]
    return (f"{tables(results)}\n\nTargets:\n\n{targets}\n\nConfig `{config['tag']}` (parts "
            f"{config['parts']}, {ssl_cfg['loss']} t = {ssl_cfg['temperature']}, λ = "
            f"{ssl_cfg['aux_weight']}, batch sizes {ssl_cfg['batch_sizes']}, {ssl_cfg['epochs']} "
            f"epochs); measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s (this invocation; finished SSL "
            f"runs are read back on a rerun, their own train times are in the tables).")
