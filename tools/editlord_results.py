"""Print an EditLord run's tables and targets and put them into the experiment's README.

    python tools/editlord_results.py --workdir=workdirs/editlord_quick \
        --readme=experiments/editlord/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/editlord/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the config tag, machine line and
wall time, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.editlord.report import tables, targets


def render(results: dict, config: dict) -> str:
    results.setdefault("editor_format", config["editor"].get("target_format", "code"))
    results["targets"] = targets(results)        # a pure function of the results
    stages = ", ".join(f"{k} {v / 60:.1f}" for k, v in results.get("stage_s", {}).items())
    resumed = [f"{v} from step {e['train']['resumed_from']}"
               for v, e in results.get("editors", {}).items() if e["train"].get("resumed_from")]
    note = (f"; this invocation resumed {', '.join(resumed)} (trained editors and cached "
            "replies are reused, so its time excludes their training)" if resumed else "")
    return (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {results['machine']}; "
            f"the last invocation took {results['wall_s'] / 60:.1f} min (stages, min: {stages}"
            f"{note}; shared machine, several jobs at once).")


if __name__ == "__main__":
    results_tool("editlord", render)
