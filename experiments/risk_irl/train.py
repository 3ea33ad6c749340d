"""Risk-sensitive IRL end to end: CATY-UL and TRACTOR-UL on every setting of the paper.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    config -> validate -> for each part in config.parts:
      investment:   experts optimal for sqrt / linear / square utilities -> their return
                    distributions from rollouts -> CATY-UL of every utility family ->
                    TRACTOR-UL from each initial utility × step sizes × seeds (SGD and Adam)
      participants: the 15 answers -> non-Markovianity -> CATY-UL of each participant's
                    standard-gamble utility and of the families -> TRACTOR-UL on one participant
      random:       random MDPs of each size, noisy convex-concave expert -> TRACTOR-UL
      multi_env:    N random MDPs, one utility -> TRACTOR-UL on the first N; the fraction of
                    random feasible utilities compatible with all N (the compatible set)
    -> workdir: config.json, parts/<part>.json, results.json, results.md, plots/*.png

Each finished part is saved in parts/<part>.json and reused when the same command is run
again (the workdir refuses a different config), so an interrupted run resumes per part.
"""
from __future__ import annotations

import os
import time
import zlib

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import paths, plotting
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.data import public
from lib.risk_irl import caty, config_schema, data, projection, report, returns, tractor
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction

validate = config_schema.validate
PARTS_DIR = "parts"


def _key(config, *names: str) -> jax.Array:
    return jax.random.PRNGKey((config.seed * 7919 + zlib.crc32(":".join(names).encode())) % 2 ** 31)


def _se(a: np.ndarray, axis: int) -> np.ndarray:
    """Standard error of the mean along `axis` (zeros for a single sample)."""
    a = np.asarray(a)
    if a.shape[axis] < 2:
        return np.zeros_like(a.mean(axis=axis))
    return a.std(axis=axis, ddof=1) / np.sqrt(a.shape[axis])


def _slope(config) -> float:
    return projection.slope_bound(config.grid.horizon, config.grid.n, config.tractor.lipschitz)


def tractor_grid(config, envs, eta_expert, inits, step_sizes, num_seeds, key, *, adam=False,
                 eval_every=None) -> dict:
    """TRACTOR-UL for every (initial utility, step size, seed), vmapped in one call.

    inits: (I, d); returns numpy arrays with leading axes (I, len(step_sizes), num_seeds)."""
    t = config.tractor
    inits = jnp.asarray(inits, jnp.float32)
    num_i, num_a = inits.shape[0], len(step_sizes)
    grid_i, grid_a, _ = np.meshgrid(np.arange(num_i), np.arange(num_a), np.arange(num_seeds),
                                    indexing="ij")
    keys = jax.random.split(key, grid_i.size)
    fn = lambda u0, a, k: tractor.run(
        envs, eta_expert, u0, a, k, n=config.grid.n, num_iters=t.num_iters,
        eval_every=eval_every or t.eval_every, method=t.method, num=t.num_traj,
        slope=_slope(config), horizon=float(config.grid.horizon), adam=adam,
        proj_iters=t.proj_iters)
    alphas = jnp.asarray(step_sizes, jnp.float32)[grid_a.ravel()]
    trace = jax.vmap(fn)(inits[grid_i.ravel()], alphas, keys)
    shape = (num_i, num_a, num_seeds)
    return {f: np.asarray(getattr(trace, f)).reshape(shape + np.shape(getattr(trace, f))[1:])
            for f in trace._fields}


def summarise(tr: dict, u_true=None) -> dict:
    """Means over seeds (last axis of the run grid) of a tractor_grid result."""
    c = tr["c_max"]                                            # (I, A, seeds, E)
    c0, c_t = c[..., 0].mean(axis=2), c[..., -1].mean(axis=2)
    out = {"steps": tr["steps"][0, 0, 0], "curve": c.mean(axis=2), "curve_se": _se(c, 2),
           "c0": c0, "cT": c_t, "cT_se": _se(c[..., -1], 2),
           "rel_T": tr["c_rel_max"][..., -1].mean(axis=2), "ratio": c_t / np.maximum(c0, 1e-12),
           "utility": tr["utility"].mean(axis=2),
           "max_projection_gap": float(tr["projection_gap"].max())}
    if u_true is not None:
        u_true = np.asarray(u_true)
        out["rmse_true"] = np.sqrt(np.mean((tr["utility"] - u_true) ** 2, axis=-1)).mean(axis=2)
        out["rmse_true_init"] = np.sqrt(np.mean((tr["averaged"][..., 0, :] - u_true) ** 2,
                                                axis=-1)).mean(axis=2)
    return out


def _expert_eta(config, env, policy, key):
    return returns.distribution_mc(env, jnp.asarray(policy), key, config.grid.n,
                                   config.tractor.num_expert)


def _caty(config, env, utility, eta_e, key):
    t = config.tractor
    r = caty.caty(env, utility, eta_e, key, n=config.grid.n, num_expert=t.num_expert,
                  method=t.method, num=t.num_traj, delta=config.caty.delta)
    return {f: np.asarray(getattr(r, f)).tolist() for f in r._fields}


# ----------------------------------------------------------------------------- parts


def run_investment(config, plot_dir) -> dict:
    """Simulated experts in the investment MDP.

    CATY-UL scores every utility family against the demonstrations of experts optimal for
    each of `investment.experts` (how well the MDP tells risk attitudes apart); TRACTOR-UL
    then learns from experts that deviate from that optimum (a fraction `investment.noise`
    of their actions changed, as the paper's simulated experts), starting from each of
    `investment.inits`, over the step sizes and seeds (SGD and Adam)."""
    g, inv = config.grid, config.investment
    env = data.investment_mdp(g.n, g.horizon)
    envs = data.stack_mdps([env])
    inits = jnp.stack([ut.family(f, g.horizon, g.n) for f in inv.inits])
    out = {"experts": {}}
    for expert in inv.experts:
        t0 = time.perf_counter()
        u_true = ut.family(expert, g.horizon, g.n)
        policy, _ = backward_induction(env, u_true, g.n)
        eta_clean = _expert_eta(config, env, policy, _key(config, "inv-expert", expert))
        cat = {f: _caty(config, env, ut.family(f, g.horizon, g.n), eta_clean,
                        _key(config, "inv-caty", expert, f)) for f in ut.FAMILIES}
        noisy = _noisy_expert(config, env, u_true, inv.noise, f"investment-{expert}")
        eta_e = _expert_eta(config, env, noisy, _key(config, "inv-noisy", expert))
        sgd = summarise(tractor_grid(config, envs, eta_e[None], inits, inv.step_sizes,
                                     inv.num_seeds, _key(config, "inv-sgd", expert)), u_true)
        adam = summarise(tractor_grid(config, envs, eta_e[None], inits, inv.adam_step_sizes,
                                      inv.num_seeds, _key(config, "inv-adam", expert), adam=True),
                         u_true)
        c_true = _caty(config, env, u_true, eta_e, _key(config, "inv-true", expert))
        out["experts"][expert] = {"caty": cat, "sgd": sgd, "adam": adam, "caty_true_noisy": c_true,
                                  "wall_s": time.perf_counter() - t0}
        logging.info("investment, expert %s: %.1f s", expert, time.perf_counter() - t0)
        if plot_dir:
            _plot_runs(plot_dir, f"investment_{expert}", sgd, inv.inits, inv.step_sizes,
                       inv.target_step_size, u_true,
                       f"noisy expert optimal for the {expert} utility", g.horizon)
    out["step_sizes"], out["adam_step_sizes"] = list(inv.step_sizes), list(inv.adam_step_sizes)
    out["inits"], out["target_step_size"] = list(inv.inits), inv.target_step_size
    out["noise"] = inv.noise
    out["expert_order"] = list(inv.experts)
    return out


def run_participants(config, plot_dir) -> dict:
    """The human data: non-Markovianity, CATY-UL of SG utilities, TRACTOR-UL on one participant."""
    g, inv, pc = config.grid, config.investment, config.participants
    people = data.load_participants(paths.resolve(pc.data_dir), g.n, g.horizon)
    num_p = people.answers.shape[0]
    if pc.participant >= num_p:
        raise config_lib.ConfigError(f"config key 'participants.participant' = {pc.participant} is "
                                     f"not allowed; the data has {num_p} participants (0-based)")
    env = data.investment_mdp(g.n, g.horizon)
    counts = data.non_markovian(people.answers, people.checkpoints)
    etas, cat = [], []
    for i in range(num_p):
        occ = returns.occupancy(env, jnp.asarray(np.maximum(people.policies[i], 0)), g.n)
        unset = float(occ[:-1][people.policies[i] < 0].sum())
        if unset > 0:
            raise ValueError(f"participant {i}'s policy reaches states no answer covers "
                             f"(probability {unset:.3g})")
        eta = _expert_eta(config, env, people.policies[i], _key(config, "people", str(i)))
        etas.append(eta)
        row = {"sg": _caty(config, env, people.sg_utilities[i], eta, _key(config, "pc", str(i)))}
        for f in ("linear", "sqrt", "square"):
            row[f] = _caty(config, env, ut.family(f, g.horizon, g.n), eta,
                           _key(config, "pf", str(i), f))
        cat.append(row)
    p = pc.participant
    inits = jnp.stack([ut.family(f, g.horizon, g.n) for f in inv.inits])
    envs = data.stack_mdps([env])
    sgd = summarise(tractor_grid(config, envs, etas[p][None], inits, inv.step_sizes,
                                 inv.num_seeds, _key(config, "people-sgd")),
                    people.sg_utilities[p])
    adam = summarise(tractor_grid(config, envs, etas[p][None], inits, inv.adam_step_sizes,
                                  inv.num_seeds, _key(config, "people-adam"), adam=True),
                     people.sg_utilities[p])
    if plot_dir:
        _plot_runs(plot_dir, "participant", sgd, inv.inits, inv.step_sizes, inv.target_step_size,
                   people.sg_utilities[p], f"participant {p}", g.horizon,
                   true_label="their standard-gamble utility")
    return {"num_participants": num_p, "non_markovian_groups": counts,
            "num_non_markovian": int((counts > 0).sum()), "caty": cat, "participant": p,
            "sgd": sgd, "adam": adam, "inits": list(inv.inits), "step_sizes": list(inv.step_sizes),
            "adam_step_sizes": list(inv.adam_step_sizes), "target_step_size": inv.target_step_size}


def _noisy_expert(config, env, u_true, noise, key_name):
    g = config.grid
    policy, _ = backward_induction(env, u_true, g.n)
    rng = np.random.default_rng(zlib.crc32(key_name.encode()) + config.seed)
    return data.noisy_policy(np.asarray(policy), rng, noise, env.p.shape[2])


def run_random(config, plot_dir) -> dict:
    """Random MDPs of every size: TRACTOR-UL against a noisy convex-concave expert."""
    g, r = config.grid, config.random
    u_true = ut.family(r.expert, g.horizon, g.n)
    u0 = ut.family(r.init, g.horizon, g.n)[None]
    sizes = {}
    for num_s, num_a, seeds in zip(r.num_states, r.num_actions, r.num_seeds):
        t0 = time.perf_counter()
        env = data.random_mdp(config.seed * 1000 + num_s, num_s, num_a, g.horizon, g.n)
        policy = _noisy_expert(config, env, u_true, r.noise, f"random-{num_s}")
        eta_e = _expert_eta(config, env, policy, _key(config, "random-expert", str(num_s)))
        tr = tractor_grid(config, data.stack_mdps([env]), eta_e[None], u0, (r.step_size,), seeds,
                          _key(config, "random", str(num_s)), eval_every=r.eval_every)
        s = summarise(tr, u_true)
        curve = s["curve"][0, 0]
        below = np.flatnonzero(curve <= curve[0] / 3)
        sizes[str(num_s)] = {
            "num_states": num_s, "num_actions": num_a, "num_seeds": seeds, "steps": s["steps"],
            "curve": curve, "curve_se": s["curve_se"][0, 0], "c0": float(curve[0]),
            "cT": float(curve[-1]), "cT_se": float(s["cT_se"][0, 0]),
            "ratio": float(curve[-1] / max(curve[0], 1e-12)),
            "iters_to_third": int(s["steps"][below[0]]) if below.size else None,
            "rmse_true": float(s["rmse_true"][0, 0]), "utility": s["utility"][0, 0],
            "max_projection_gap": s["max_projection_gap"], "wall_s": time.perf_counter() - t0}
        logging.info("random S=%d A=%d: C %.3f -> %.3f (%.0f s)", num_s, num_a, curve[0], curve[-1],
                     time.perf_counter() - t0)
        del env
    if plot_dir:
        plotting.line_plot(os.path.join(plot_dir, "random_noncompatibility.png"),
                           {f"|S| = {k}": (v["steps"], v["curve"]) for k, v in sizes.items()},
                           xlabel="iteration t", ylabel="C(Ū_t)",
                           title=f"TRACTOR-UL on random MDPs, α = {r.step_size:g}")
        plotting.line_plot(os.path.join(plot_dir, "random_utilities.png"),
                           {"true (convex-concave)": (ut.returns_grid(g.horizon, g.n), u_true),
                            **{f"learned, |S| = {k}": (ut.returns_grid(g.horizon, g.n), v["utility"])
                               for k, v in sizes.items()}},
                           xlabel="return G", ylabel="U(G)", title="learned utilities, random MDPs")
    return {"sizes": sizes, "step_size": r.step_size, "eval_every": r.eval_every}


def run_multi_env(config, plot_dir) -> dict:
    """N environments sharing one utility: TRACTOR-UL and the size of the compatible set.

    The set: random utilities of 𝒰_L scored by the exact non-compatibility (forward-DP
    return distributions of noise-free experts, so C(U_true) = 0 exactly); a utility counts
    as compatible with the first N environments when max_{i ≤ N} C_i(U) ≤ tolerance, the
    smallest tolerance (10⁻⁴) being float32 rounding, i.e. exact compatibility."""
    g, m = config.grid, config.multi_env
    u_true = ut.family(config.random.expert, g.horizon, g.n)
    u0 = ut.family(config.random.init, g.horizon, g.n)[None]
    num_max = max(m.num_envs)
    envs = [data.random_mdp(config.seed * 1000 + 17 * i + 5, m.num_states, m.num_actions,
                            g.horizon, g.n) for i in range(num_max)]
    noisy = [_noisy_expert(config, e, u_true, m.noise, f"multi-{i}") for i, e in enumerate(envs)]
    eta_e = jnp.stack([_expert_eta(config, e, pi, _key(config, "multi-expert", str(i)))
                       for i, (e, pi) in enumerate(zip(envs, noisy))])
    stacked = data.stack_mdps(envs)
    runs = {}
    for num in m.num_envs:
        sub = jax.tree_util.tree_map(lambda a, k=num: a[:k], stacked)
        s = summarise(tractor_grid(config, sub, eta_e[:num], u0, (m.step_size,), m.num_seeds,
                                   _key(config, "multi", str(num))), u_true)
        curve = s["curve"][0, 0]
        runs[str(num)] = {"num_envs": num, "steps": s["steps"], "curve": curve,
                          "c0": float(curve[0]), "cT": float(curve[-1]),
                          "cT_se": float(s["cT_se"][0, 0]),
                          "ratio": float(curve[-1] / max(curve[0], 1e-12)),
                          "rmse_true": float(s["rmse_true"][0, 0]), "utility": s["utility"][0, 0]}
    # The compatible set: exact C_i(U) of noise-free experts for random feasible utilities.
    exact_e = jnp.stack([returns.distribution_exact(e, backward_induction(e, u_true, g.n)[0], g.n)
                         for e in envs])
    cands = ut.random_utilities(_key(config, "set"), m.set_samples, g.horizon, g.n, _slope(config),
                                m.knots)
    cands = jnp.concatenate([cands, u_true[None]])

    def c_of(u):
        return jax.vmap(lambda e, ee: caty.noncompatibility(e, u, ee, jax.random.PRNGKey(0),
                                                            g.n, "exact")[0])(stacked, exact_e)

    c_all = np.asarray(jax.lax.map(c_of, cands))              # (K + 1, N_max)
    c_true, c_rand = c_all[-1], c_all[:-1]
    dist = np.sqrt(np.mean((np.asarray(cands[:-1]) - np.asarray(u_true)) ** 2, axis=1))
    sets = {}
    for num in m.num_envs:
        worst = c_rand[:, :num].max(axis=1)
        rows = []
        for tol in m.set_tolerances:
            ok = worst <= tol
            f = float(ok.mean())
            rows.append({"tolerance": tol, "fraction": f,
                         "fraction_se": float(np.sqrt(f * (1 - f) / ok.size)),
                         "count": int(ok.sum()),
                         "rmse_compatible": float(dist[ok].mean()) if ok.any() else None})
        sets[str(num)] = {"by_tolerance": rows, "true_max_c": float(c_true[:num].max()),
                          "median_max_c": float(np.median(worst))}
    if plot_dir:
        plotting.line_plot(os.path.join(plot_dir, "multi_env_noncompatibility.png"),
                           {f"N = {k}": (v["steps"], v["curve"]) for k, v in runs.items()},
                           xlabel="iteration t", ylabel="max_i C_i(Ū_t)",
                           title=f"TRACTOR-UL with N environments, α = {m.step_size:g}")
        grid = ut.returns_grid(g.horizon, g.n)
        plotting.line_plot(os.path.join(plot_dir, "multi_env_utilities.png"),
                           {"true (convex-concave)": (grid, u_true),
                            **{f"learned, N = {k}": (grid, v["utility"]) for k, v in runs.items()}},
                           xlabel="return G", ylabel="U(G)", title="learned utilities, N environments")
    return {"runs": runs, "set": sets, "set_samples": m.set_samples,
            "set_tolerances": list(m.set_tolerances), "rmse_all_candidates": float(dist.mean())}


def _plot_runs(plot_dir, name, s, inits, step_sizes, target, u_true, title, horizon,
               true_label="true"):
    """C(Ū_t) against t (target step size and the smallest) and Ū_T against the true U."""
    j = list(step_sizes).index(target)
    steps = s["steps"]
    plotting.line_plot(os.path.join(plot_dir, f"{name}_noncompatibility.png"),
                       {f"start {f}, α = {a:g}": (steps, s["curve"][i, k])
                        for i, f in enumerate(inits) for k, a in enumerate(step_sizes)
                        if k == j or a == step_sizes[0]},
                       xlabel="iteration t", ylabel="C(Ū_t)", title=title)
    x = np.linspace(0.0, float(horizon), len(u_true))
    plotting.line_plot(os.path.join(plot_dir, f"{name}_utilities.png"),
                       {true_label: (x, np.asarray(u_true)),
                        **{f"learned from {f} (α = {target:g})": (x, s["utility"][i, j])
                           for i, f in enumerate(inits)}},
                       xlabel="return G", ylabel="U(G)", title=title)


# ----------------------------------------------------------------------------- targets


def targets(results: dict, config) -> dict:
    """The issue's targets from the parts that ran: C falls to ≤ 1/3 of its start on every
    setting, at a rate not growing with |S|; more environments shrink the compatible set."""
    out = {}
    if "investment" in results:
        inv = results["investment"]
        j = inv["step_sizes"].index(inv["target_step_size"])
        rows = {}
        for expert in inv["expert_order"]:
            e = inv["experts"][expert]
            for i, f in enumerate(inv["inits"]):
                c0, tau = e["sgd"]["c0"][i][j], e["caty_true_noisy"]["threshold"]
                if c0 > tau:                      # a start that is not already compatible
                    rows[f"{expert}<-{f}"] = e["sgd"]["ratio"][i][j] <= 1 / 3
        out["investment_third"] = rows
    if "participants" in results:
        p = results["participants"]
        j = p["step_sizes"].index(p["target_step_size"])
        out["participant_third"] = {f: p["sgd"]["ratio"][i][j] <= 1 / 3
                                    for i, f in enumerate(p["inits"])}
        out["num_non_markovian"] = p["num_non_markovian"]
    if "random" in results:
        sz = dict(report.by_number(results["random"]["sizes"]))
        out["random_third"] = {k: v["ratio"] <= 1 / 3 for k, v in sz.items()}
        iters = [v["iters_to_third"] for v in sz.values()]
        first = iters[0]
        out["random_iters_to_third"] = {k: v["iters_to_third"] for k, v in sz.items()}
        out["random_rate_not_growing"] = bool(
            all(i is not None for i in iters)
            and all(i <= first + results["random"]["eval_every"] for i in iters[1:]))
    if "multi_env" in results:
        me = results["multi_env"]
        out["multi_env_third"] = {k: v["ratio"] <= 1 / 3 for k, v in report.by_number(me["runs"])}
        keys = [k for k, _ in report.by_number(me["set"])]
        lo, hi = me["set"][keys[0]]["by_tolerance"][0], me["set"][keys[-1]]["by_tolerance"][0]
        out["compatible_set_shrinks"] = bool(
            hi["fraction"] + 2 * np.hypot(hi["fraction_se"], lo["fraction_se"]) < lo["fraction"])
    flat = []
    for v in out.values():
        if isinstance(v, dict):
            flat += [bool(x) for x in v.values() if isinstance(x, (bool, np.bool_))]
        elif isinstance(v, (bool, np.bool_)):
            flat.append(bool(v))
    out["all_met"] = bool(all(flat))
    return out


# ----------------------------------------------------------------------------- entry point

RUNNERS = {"investment": run_investment, "participants": run_participants,
           "random": run_random, "multi_env": run_multi_env}


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.ndarray, jax.Array)):
        return np.asarray(obj).tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    return obj


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md, parts/ and plots/ to `workdir`."""
    validate(config)
    if "participants" in config.parts:      # fail before any compute when the data is absent
        data_dir = paths.resolve(config.participants.data_dir)
        if data_dir == public.default_dir("risk_irl"):
            try:
                public.check("risk_irl", data_dir)
            except public.DataError as err:
                raise config_lib.ConfigError(str(err)) from None
        for name in (data.MDP_FILE, data.SG_FILE):
            path = os.path.join(data_dir, name)
            if not os.path.isfile(path):
                raise FileNotFoundError(
                    f"participants file {path!r} not found; set --config.participants.data_dir "
                    "to the directory holding data_MDP.csv and data_SG.csv, or drop "
                    "'participants' from --config.parts")
    wd.prepare(workdir, config_lib.to_json_dict(config))
    plot_dir = os.path.join(workdir, wd.PLOTS) if config.eval.plots else None
    t0 = time.perf_counter()
    results = {}
    for part in config.parts:
        path = os.path.join(workdir, PARTS_DIR, f"{part}.json")
        if os.path.exists(path):
            results[part] = wd.read_json(path)
            logging.info("part %s: reused %s", part, path)
            continue
        tp = time.perf_counter()
        res = _jsonable(RUNNERS[part](config, plot_dir))
        res["part_wall_s"] = time.perf_counter() - tp
        wd.write_json_atomic(path, res)
        results[part] = res
        logging.info("part %s done in %.1f s", part, res["part_wall_s"])
    results["targets"] = targets(results, config)
    results["machine"] = common_report.machine()
    results["wall_s"] = time.perf_counter() - t0
    results["parts_wall_s"] = {p: results[p]["part_wall_s"] for p in config.parts}
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results
