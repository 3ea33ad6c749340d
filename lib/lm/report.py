"""The lm addition experiment's results table (experiments/lm; spliced into its README by
tools/results.py --paper=lm).

    targets(results)         # results.json "targets": the held-out exact-match target record
    results_table(results)   # results.md: the quantity / value table with the target
    render(results, config)  # the README block: the table, config, machine, wrong answers

The eval results keep their `target_met` bool (the table's verdict, also in runs stored
before the "targets" record), so the table reads the same from either.
"""
from __future__ import annotations

from lib.common.report import machine_text, target, verdict


def targets(results: dict) -> dict:
    """The target record: held-out exact match at least eval's target (its verdict is the
    eval's `target_met`), with both numbers."""
    e = results["eval"]
    return {"held_out_exact_match": target(e["target_met"], exact_match=e["exact_match"],
                                           threshold=e["target_exact_match"])}


def results_table(results: dict) -> str:
    """Parameters, shape, steps, wall time, final NLL, held-out exact match and the target
    (MET / MISSED) of results.json as a markdown table."""
    e, m = results["eval"], results["model"]
    rows = [("parameters", f"{results['num_params']:,}"),
            ("layers × width × heads", f"{m['num_layers']} × {m['d_model']} × {m['num_heads']}"),
            ("training steps", str(results["step"])),
            ("training wall time", f"{results['train_wall_s']:.0f} s"),
            ("final masked NLL", f"{results.get('final_loss', float('nan')):.4f}"),
            ("held-out exact match", f"{e['exact_match']:.3f} ({e['num_correct']}/{e['num_eval']})"),
            ("target", f"≥ {e['target_exact_match']:.2f}: {verdict(e['target_met'])}")]
    return "| quantity | value |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def render(results: dict, config: dict) -> str:
    """`results_table` with the config, machine, wall time and up to 3 wrong answers."""
    e = results["eval"]
    wrong = "; ".join(f"`{w['problem']}` → `{w['reply'][-8:]}` (truth {w['truth']})"
                      for w in e["wrong_examples"][:3])
    return (f"{results_table(results)}\n\nConfig `{config['tag']}` "
            f"({config['task']['digits']}-digit operands, {config['task']['num_train']:,} "
            f"training conversations, batch {config['train']['batch_size']}); measured on "
            f"{machine_text(results['machine'])} in {results['wall_s']:.0f} s. " + (f"Some wrong answers: {wrong}." if wrong else "No wrong answers."))
