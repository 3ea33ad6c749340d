"""Tuning the `fd4_tuned` classical family's stencil knobs (θ hyperviscosity, φ dispersion; see
`lib.multipdenet.classical`) per grid and step, and the front's accuracy cache whose file
names carry those knobs. Used by `tools/bench/multipdenet_front.py --tune_fd4`."""
from __future__ import annotations

import os

from lib.common import workdir as wd
from lib.multipdenet import classical, front


def family_tag(family: str, knobs=None) -> str:
    """A classical family's name in cache files: `fd4_tuned@<θ>` (φ = 0) or `@<θ>@<φ>`."""
    if knobs is None:
        return family
    theta, phi = knobs
    return f"{family}@{theta:+.4f}" + (f"@{phi:+.4f}" if phi else "")


def parse_family_tag(tag: str) -> tuple[str, list[float] | None]:
    family, *knobs = tag.split("@")
    return family, ([float(knobs[0]), float(knobs[1]) if len(knobs) > 1 else 0.0] if knobs else None)


def cache_file(cache: str, dataset: str, spec: dict, knobs=None) -> str:
    """Where a classical point's accuracy on one dataset is cached (fd4_tuned: per knobs)."""
    tag = family_tag(spec["family"], spec.get("knobs") if knobs is None else knobs)
    return os.path.join(cache, os.path.basename(dataset), f"{tag}_{spec['grid']}_{spec['steps_per_frame']}.json")


def cached(file: str, compute) -> dict:
    """The JSON record in `file`, computed by `compute()` and written atomically if missing."""
    if not os.path.exists(file):
        wd.write_json_atomic(file, compute())
    return wd.read_json(file)


def best_row(rows: list[dict]) -> dict:
    """The row with the highest mean HCT among those with no non-finite IC (all blow up: the
    highest HCT); the first of ties, so rows sorted by |knob| prefer the smaller."""
    return max([r for r in rows if r["nonfinite_ics"] == 0] or rows, key=lambda r: r["hct"])


def tune_fd4(meta: dict, parts, specs: list[dict], thetas: list[float], dispersions: list[float],
             cache: str, accuracy) -> dict:
    """`fd4_tuned`'s knobs per grid and step, by coordinate search on `parts`' ICs: θ over
    `thetas` at φ = 0, then φ over `dispersions` at that θ (`best_row` each). Returns the tuning
    file's contents: the chosen tables and every sweep's HCTs."""
    thetas, dispersions = sorted(thetas, key=abs), sorted(dispersions, key=abs)
    tables, sweeps = {"theta": {}, "dispersion": {}}, {}
    for spec in specs:
        n, steps = str(spec["grid"]), str(spec["steps_per_frame"])
        fn, _ = classical.build(meta, "fd4_tuned", spec["grid"], spec["steps_per_frame"], knobs=(0.0, 0.0))
        truths = {path: front.resample(test, spec["grid"]) for path, test in parts}

        def score(theta, phi):
            params = classical.stencil_params(theta, phi)
            rec = front.merge_accuracies([cached(cache_file(cache, path, spec, (theta, phi)),
                                                 lambda path=path: accuracy(fn, params, truths[path]))
                                          for path, _ in parts])
            return {"theta": theta, "dispersion": phi, "hct": rec["hct"], "nonfinite_ics": rec["nonfinite_ics"]}

        rows = [score(t, 0.0) for t in thetas]
        theta = best_row(rows)["theta"]
        rows_phi = [score(theta, d) for d in dispersions]
        best = best_row(rows_phi)
        tables["theta"].setdefault(n, {})[steps] = theta
        tables["dispersion"].setdefault(n, {})[steps] = best["dispersion"]
        sweeps.setdefault(n, {})[steps] = {"theta": rows, "dispersion": rows_phi}
        print(f"{spec['name']}: θ = {theta:+g}, φ = {best['dispersion']:+g} (HCT {best['hct']:.3g}; "
              f"FD4: {rows[0]['hct']:.3g})", flush=True)
    return {**tables, "sweep": sweeps, "thetas": thetas, "dispersions": dispersions,
            "dataset": [p for p, _ in parts], "n_ics": int(sum(len(t) for _, t in parts))}
