"""Print a cl_similarity run's tables and put them into the experiment's README.

    python tools/cl_similarity_results.py --workdir=workdirs/cl_similarity_quick \
        --readme=experiments/cl_similarity/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cl_similarity/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the targets and the machine line,
and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.cl_similarity.report import splice, tables
from lib.common import workdir as wd

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/cl_similarity_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/cl_similarity/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    targets = "\n".join(f"- `{k}`: **{'MET' if v else 'MISSED'}**"
                        for k, v in results["targets"].items())
    ssl_cfg = config["ssl"]
    text = (f"{tables(results)}\n\nTargets:\n\n{targets}\n\nConfig `{config['tag']}` (parts "
            f"{config['parts']}, {ssl_cfg['loss']} t = {ssl_cfg['temperature']}, λ = "
            f"{ssl_cfg['aux_weight']}, batch sizes {ssl_cfg['batch_sizes']}, {ssl_cfg['epochs']} "
            f"epochs); measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s (this invocation; finished SSL "
            f"runs are read back on a rerun, their own train times are in the tables).")
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
