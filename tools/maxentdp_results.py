"""Print a MaxEntDP run's tables and put them, with the plots' paths, into the README.

    python tools/maxentdp_results.py --workdir=workdirs/maxentdp_quick \
        --readme=experiments/maxentdp/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/maxentdp/main.py), renders the
returns / multi-goal / targets tables (`lib.maxentdp.report.tables`) with the machine line
and the return curves per environment (mean of the seeds at each evaluation), and with
the tables of `<workdir>/diagnosis.json` when experiments/maxentdp/diagnose_multigoal.py
wrote one there, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.

Runs made in separate workdirs (e.g. one process per agent on an accelerator lease) are
rendered together with `--merge=DIR,DIR` (their runs join those of `--workdir`; the targets
are recomputed over all of them), and `--from_metrics` rebuilds every run's entry from its
`runs/<env>_<algo>/metrics.jsonl`, which holds every evaluated chunk even when the process
was killed after its last results.json write; `--plot_dir` writes the merged return plots.

    python tools/maxentdp_results.py --workdir=workdirs/gpu_lease/maxentdp/hopper_maxentdp \
        --merge=workdirs/gpu_lease/maxentdp/hopper_sac --from_metrics \
        --plot_dir=workdirs/maxentdp_h200_plots --readme=experiments/maxentdp/README.md \
        --tag=gpu_hopper
"""
from __future__ import annotations

from absl import flags

from lib.common.report import results_tool
from lib.maxentdp import report

flags.DEFINE_list("merge", [], "more workdirs whose runs join those of --workdir")
flags.DEFINE_bool("from_metrics", False, "rebuild each run's entry from its metrics.jsonl")
flags.DEFINE_string("plot_dir", None, "write the return plots of the (merged) runs here")
FLAGS = flags.FLAGS


def render(results: dict, config: dict) -> str:
    if FLAGS.merge or FLAGS.from_metrics:
        from lib.maxentdp.runs import collect   # jax and the agents: only when merging
        results = collect(results, [FLAGS.workdir] + FLAGS.merge, FLAGS.from_metrics)
    return report.render(results, config, FLAGS.workdir, FLAGS.merge, FLAGS.from_metrics,
                         FLAGS.plot_dir)


if __name__ == "__main__":
    results_tool("maxentdp", render)
