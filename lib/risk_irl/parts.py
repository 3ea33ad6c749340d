"""The four parts of the risk-IRL experiment; each `run_<part>(config, plot_dir)` returns its
results dict (numpy arrays allowed) and writes its plots when `plot_dir` is set.

    investment:   experts optimal for sqrt / linear / square utilities -> CATY-UL of every
                  utility family -> TRACTOR-UL from each initial utility × step sizes × seeds
    participants: the answers -> non-Markovianity -> CATY-UL of each participant's
                  standard-gamble utility and of the families -> TRACTOR-UL on one participant
    random:       random MDPs of each size, noisy convex-concave expert -> TRACTOR-UL
    multi_env:    N random MDPs, one utility -> TRACTOR-UL on the first N; the fraction of
                  random feasible utilities compatible with all N (the compatible set)
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import paths
from lib.risk_irl import caty, data, returns
from lib.risk_irl.sweep import (caty_scores, expert_eta, noisy_expert, part_key, slope, summarise,
                                tractor_grid)
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction
from lib.toolbox import plotting


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
        eta_clean = expert_eta(config, env, policy, part_key(config, "inv-expert", expert))
        cat = {f: caty_scores(config, env, ut.family(f, g.horizon, g.n), eta_clean,
                        part_key(config, "inv-caty", expert, f)) for f in ut.FAMILIES}
        noisy = noisy_expert(config, env, u_true, inv.noise, f"investment-{expert}")
        eta_e = expert_eta(config, env, noisy, part_key(config, "inv-noisy", expert))
        sgd = summarise(tractor_grid(config, envs, eta_e[None], inits, inv.step_sizes,
                                     inv.num_seeds, part_key(config, "inv-sgd", expert)), u_true)
        adam = summarise(tractor_grid(config, envs, eta_e[None], inits, inv.adam_step_sizes,
                                      inv.num_seeds, part_key(config, "inv-adam", expert),
                                      adam=True), u_true)
        c_true = caty_scores(config, env, u_true, eta_e, part_key(config, "inv-true", expert))
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
        eta = expert_eta(config, env, people.policies[i], part_key(config, "people", str(i)))
        etas.append(eta)
        row = {"sg": caty_scores(config, env, people.sg_utilities[i], eta,
                                 part_key(config, "pc", str(i)))}
        for f in ("linear", "sqrt", "square"):
            row[f] = caty_scores(config, env, ut.family(f, g.horizon, g.n), eta,
                                 part_key(config, "pf", str(i), f))
        cat.append(row)
    p = pc.participant
    inits = jnp.stack([ut.family(f, g.horizon, g.n) for f in inv.inits])
    envs = data.stack_mdps([env])
    sgd = summarise(tractor_grid(config, envs, etas[p][None], inits, inv.step_sizes,
                                 inv.num_seeds, part_key(config, "people-sgd")),
                    people.sg_utilities[p])
    adam = summarise(tractor_grid(config, envs, etas[p][None], inits, inv.adam_step_sizes,
                                  inv.num_seeds, part_key(config, "people-adam"), adam=True),
                     people.sg_utilities[p])
    if plot_dir:
        _plot_runs(plot_dir, "participant", sgd, inv.inits, inv.step_sizes, inv.target_step_size,
                   people.sg_utilities[p], f"participant {p}", g.horizon,
                   true_label="their standard-gamble utility")
    return {"num_participants": num_p, "non_markovian_groups": counts,
            "num_non_markovian": int((counts > 0).sum()), "caty": cat, "participant": p,
            "sgd": sgd, "adam": adam, "inits": list(inv.inits), "step_sizes": list(inv.step_sizes),
            "adam_step_sizes": list(inv.adam_step_sizes), "target_step_size": inv.target_step_size}


def run_random(config, plot_dir) -> dict:
    """Random MDPs of every size: TRACTOR-UL against a noisy convex-concave expert."""
    g, r = config.grid, config.random
    u_true = ut.family(r.expert, g.horizon, g.n)
    u0 = ut.family(r.init, g.horizon, g.n)[None]
    sizes = {}
    for num_s, num_a, seeds in zip(r.num_states, r.num_actions, r.num_seeds):
        t0 = time.perf_counter()
        env = data.random_mdp(config.seed * 1000 + num_s, num_s, num_a, g.horizon, g.n)
        policy = noisy_expert(config, env, u_true, r.noise, f"random-{num_s}")
        eta_e = expert_eta(config, env, policy, part_key(config, "random-expert", str(num_s)))
        tr = tractor_grid(config, data.stack_mdps([env]), eta_e[None], u0, (r.step_size,), seeds,
                          part_key(config, "random", str(num_s)), eval_every=r.eval_every)
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
    noisy = [noisy_expert(config, e, u_true, m.noise, f"multi-{i}") for i, e in enumerate(envs)]
    eta_e = jnp.stack([expert_eta(config, e, pi, part_key(config, "multi-expert", str(i)))
                       for i, (e, pi) in enumerate(zip(envs, noisy))])
    stacked = data.stack_mdps(envs)
    runs = {}
    for num in m.num_envs:
        sub = jax.tree_util.tree_map(lambda a, k=num: a[:k], stacked)
        s = summarise(tractor_grid(config, sub, eta_e[:num], u0, (m.step_size,), m.num_seeds,
                                   part_key(config, "multi", str(num))), u_true)
        curve = s["curve"][0, 0]
        runs[str(num)] = {"num_envs": num, "steps": s["steps"], "curve": curve,
                          "c0": float(curve[0]), "cT": float(curve[-1]),
                          "cT_se": float(s["cT_se"][0, 0]),
                          "ratio": float(curve[-1] / max(curve[0], 1e-12)),
                          "rmse_true": float(s["rmse_true"][0, 0]), "utility": s["utility"][0, 0]}
    sets, rmse_all = compatible_set(config, envs, stacked, u_true)
    if plot_dir:
        _plot_multi_env(plot_dir, config, runs, u_true)
    return {"runs": runs, "set": sets, "set_samples": m.set_samples,
            "set_tolerances": list(m.set_tolerances), "rmse_all_candidates": rmse_all}


def compatible_set(config, envs, stacked, u_true) -> tuple[dict, float]:
    """Per N in `multi_env.num_envs`, the fraction of `multi_env.set_samples` random feasible
    utilities with max_{i ≤ N} C_i(U) ≤ each tolerance (exact C of noise-free experts), and
    the mean RMS distance of all candidates to the true utility."""
    g, m = config.grid, config.multi_env
    exact_e = jnp.stack([returns.distribution_exact(e, backward_induction(e, u_true, g.n)[0], g.n)
                         for e in envs])
    cands = ut.random_utilities(part_key(config, "set"), m.set_samples, g.horizon, g.n,
                                slope(config), m.knots)
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
    return sets, float(dist.mean())


def _plot_multi_env(plot_dir, config, runs, u_true):
    g, m = config.grid, config.multi_env
    plotting.line_plot(os.path.join(plot_dir, "multi_env_noncompatibility.png"),
                       {f"N = {k}": (v["steps"], v["curve"]) for k, v in runs.items()},
                       xlabel="iteration t", ylabel="max_i C_i(Ū_t)",
                       title=f"TRACTOR-UL with N environments, α = {m.step_size:g}")
    grid = ut.returns_grid(g.horizon, g.n)
    plotting.line_plot(os.path.join(plot_dir, "multi_env_utilities.png"),
                       {"true (convex-concave)": (grid, u_true),
                        **{f"learned, N = {k}": (grid, v["utility"]) for k, v in runs.items()}},
                       xlabel="return G", ylabel="U(G)", title="learned utilities, N environments")


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


RUNNERS = {"investment": run_investment, "participants": run_participants,
           "random": run_random, "multi_env": run_multi_env}
