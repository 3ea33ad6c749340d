"""Print a 3D-FLEG run's per-session tables and targets and put them into the README.

    python tools/fleg3d_results.py --workdir=workdirs/fleg3d_quick \
        --readme=experiments/fleg3d/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/fleg3d/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the config tag, the data files of a
real-data run, machine line, wall time and the per-session curves' paths, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.fleg3d.report import tables


def data_text(results: dict, config: dict) -> str:
    """Where the clouds came from, for a real-data run ("" for procedural data)."""
    source = results.get("data", {}).get("source", "procedural")
    if source == "procedural":
        return ""
    cross = (f", ScanObjectNN files at `{config['data']['cross_path']}` for the cross-domain "
             "sessions" if "cross_domain" in results["protocols"] else "")
    return f"{source} files at `{config['data']['path']}`{cross}; "


def render(results: dict, config: dict) -> str:
    train_min = sum(t["wall_s"] for t in results["train"].values()) / 60
    plots = ", ".join(f"`plots/{p}_{k}.png`" for p in results["protocols"] for k in ("acc", "harmonic"))
    return (f"{tables(results)}\n\nConfig `{config['tag']}` ({data_text(results, config)}"
            f"{results['num_clouds']} clouds, "
            f"descriptor dim {results['descriptor_dim']}, {config['eval']['repeats']} support "
            f"draws); measured on {results['machine']} in {results['wall_s'] / 60:.0f} min "
            f"({train_min:.0f} min training {len(results['train'])} networks; shared machine, "
            f"several jobs at once). Per-session curves in the workdir: {plots}.")


if __name__ == "__main__":
    results_tool("fleg3d", render)
