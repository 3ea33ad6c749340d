"""Print a cl_similarity run's tables and put them into the experiment's README.

    python tools/cl_similarity_results.py --workdir=workdirs/cl_similarity_quick \
        --readme=experiments/cl_similarity/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cl_similarity/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the targets and the machine line,
and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.cl_similarity.report import tables
from lib.common.report import results_tool


def render(results: dict, config: dict) -> str:
    targets = "\n".join(f"- `{k}`: **{'MET' if v else 'MISSED'}**"
                        for k, v in results["targets"].items())
    ssl_cfg = config["ssl"]
    return (f"{tables(results)}\n\nTargets:\n\n{targets}\n\nConfig `{config['tag']}` (parts "
            f"{config['parts']}, {ssl_cfg['loss']} t = {ssl_cfg['temperature']}, λ = "
            f"{ssl_cfg['aux_weight']}, batch sizes {ssl_cfg['batch_sizes']}, {ssl_cfg['epochs']} "
            f"epochs); measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s (this invocation; finished SSL "
            f"runs are read back on a rerun, their own train times are in the tables).")


if __name__ == "__main__":
    results_tool("cl_similarity", render)
