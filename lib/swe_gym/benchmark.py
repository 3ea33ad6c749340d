"""The benchmark phase: generated repositories -> validated instances, split by repository,
and the recheck of the grader against a direct re-run of pytest.

    bench = build(ctx)                  # stage "instances"; writes <workdir>/instances.jsonl
    rows = recheck(ctx, bench.test)     # stage "recheck": [id, patch name, grader, direct]
"""
from __future__ import annotations

import dataclasses
import os

from absl import logging

from lib import sandbox
from lib.swe_gym import generate, grader, instances, repos, runtime


@dataclasses.dataclass
class Benchmark:
    train_specs: list            # repos.RepoSpec of the training repositories
    test_repos: list[str]        # names of the held-out repositories
    stats: dict                  # generate.GenStats as a dict
    all: list[dict]              # validated instances
    train: list[dict]
    test: list[dict]
    kinds: dict[str, str]        # instance id -> bug kind


def build(ctx) -> Benchmark:
    """Stage "instances" (generation), then the checks and the train / held-out split.
    RuntimeError when the stored stage has no repository store, or too few instances."""
    config, d = ctx.config, ctx.config.data
    specs = repos.sample_specs(d.num_repos, config.seed, d.themes_per_repo, d.funcs_per_theme)

    def make_instances(_):
        def progress(i, n, k):
            logging.info("swe_gym: generated %d/%d repositories, %d instances", i, n, k)
        insts, st = generate.generate(specs, ctx.store, per_repo=d.per_repo,
                                      kinds=tuple(d.kinds), seed=config.seed, cache=ctx.cache,
                                      limits=ctx.limits, progress=progress)
        return {"instances": insts, "stats": dataclasses.asdict(st)}
    gen = ctx.stages.run("instances", make_instances)
    missing = [s.name for s in specs if not os.path.isdir(repos.repo_dir(ctx.store, s.name))]
    if missing:
        raise RuntimeError(f"{ctx.workdir}/stages/instances.json exists but the repository "
                           f"store lacks {missing[:3]}; delete stages/instances.json to "
                           "regenerate (the commits are reproducible: same hashes)")
    all_insts = [instances.validate_record(r) for r in gen["instances"]]
    instances.save(os.path.join(ctx.workdir, "instances.jsonl"), all_insts)
    if len(all_insts) < d.min_instances:
        raise RuntimeError(f"only {len(all_insts)} validated instances, fewer than "
                           f"data.min_instances = {d.min_instances}; raise data.per_repo")
    test_repos = [s.name for s in specs[-d.num_test_repos:]]
    train, test = instances.split_by_repo(all_insts, test_repos)
    logging.info("swe_gym: %d instances (%d train, %d held-out)", len(all_insts), len(train),
                 len(test))
    return Benchmark(train_specs=specs[:-d.num_test_repos], test_repos=test_repos,
                     stats=gen["stats"], all=all_insts, train=train, test=test,
                     kinds={r["instance_id"]: r["bug_kind"] for r in all_insts})


def recheck(ctx, test_insts: list[dict]) -> list[list]:
    """Stage "recheck": for the gold and the empty patch of every held-out instance,
    [instance id, "gold" | "empty", grader's resolution, direct re-run's resolution]."""
    def run(_):
        rows = []
        for inst in test_insts:
            for name, patch in (("gold", inst["patch"]), ("empty", "")):
                g = grader.grade(inst, patch, ctx.store, limits=ctx.limits,
                                 cache=ctx.cache).resolution
                rows.append([inst["instance_id"], name, g,
                             direct_verdict(inst, patch, ctx.store, ctx.limits)])
        return rows
    return ctx.stages.run("recheck", run)



def recheck_summary(rechecked: list[list], keep: int) -> dict:
    """{"agree", "checked", "disagreements"} of `recheck`'s rows: how many rows the grader
    and the direct re-run agree on, of how many, and the first `keep` rows where they differ."""
    differ = [r for r in rechecked if r[2] != r[3]]
    return {"agree": len(rechecked) - len(differ), "checked": len(rechecked),
            "disagreements": differ[:keep]}


def direct_verdict(inst: dict, patch: str, store: str, limits) -> str:
    """Resolution from an uncached pytest run, written independently of grader.grade's
    plumbing (own checkout, `git apply`, test files from the test patch, run_pytest)."""
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        if patch.strip():
            r = repos.git(ws.path, "apply", "-", check=False, input_text=patch)
            if r.returncode:
                return "NO"
        for f in runtime.patch_files(inst["test_patch"]):
            repos.git(ws.path, "checkout", "-q", inst["base_commit"], "--", f)
        repos.git(ws.path, "apply", "-", input_text=inst["test_patch"])
        rep = sandbox.run_pytest(ws.path, grader.test_targets(inst), limits=limits,
                                 env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return grader.resolution(rep.status, instances.test_list(inst, "FAIL_TO_PASS"),
                             instances.test_list(inst, "PASS_TO_PASS"))["resolution"]
