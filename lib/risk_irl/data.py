"""Environments and experts: the investment MDP, random MDPs, simulated experts, participants.

Investment MDP (the paper's human study, Sec. 6): wealth levels S = {L, M, H, T} (0..3),
actions A = {a0 hold, a+ risky up, a− cash out} (0..2), H = 5, s_0 = M. Holding pays the
level's value {0, 30, 100, 500} €, a+ pays nothing and moves one level up with probability
1/3 (T stays T), a− pays twice the value and moves one level down with probability 1/5 (L
stays L). Rewards are divided by the largest, 1000 €, so one unit of return is 1000 € and,
with ε₀ = 0.01, one grid step is 10 €.

Participants (data/risk_irl from `python tools/fetch_data.py risk_irl`, or a configured directory):
  data_MDP.csv   one row per participant, one column per checkpoint `MDP_<h>_<state>_<€>`
                 (h = 1..H, state ∈ L/M/H/T, cumulative reward in €), cells a0 / a+ / a−;
  data_SG.csv    one row per participant, columns `SG_<€>`: the standard-gamble
                 indifference probability p(x) between x € for sure and a 5000 €/0 € lottery.
A participant's policy on the enlarged state takes their answer at each checkpoint, the
answer at the nearest answered cumulative reward of the same (h, state) elsewhere (ties to
the lower one), a+ in state L at h ≥ 2 (every action pays 0 there) and a− at the last step
(cashing out pays most whatever the utility). Their SG utility is the piecewise-linear
interpolation of (0, 0), (x/1000, H p(x)), (5, H).
"""
from __future__ import annotations

import csv
import os
import re
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from lib.risk_irl.mdp import MDP, grid_size, make_mdp
from lib.risk_irl.utilities import interpolate

STATES = ("L", "M", "H", "T")
ACTIONS = ("a0", "a+", "a-")
EUROS_PER_UNIT = 1000.0
LEVEL_EUROS = (0.0, 30.0, 100.0, 500.0)
SG_PRIZE_EUROS = 5000.0
MDP_FILE, SG_FILE = "data_MDP.csv", "data_SG.csv"


def investment_arrays(horizon: int = 5, p_up: float = 1 / 3, p_down: float = 1 / 5,
                      hold: float = 1.0, plus: float = 0.0, minus: float = 2.0):
    """(p, r) of the investment MDP: p (H, 4, 3, 4), r (H, 4, 3) in [0, 1]."""
    num_s = len(STATES)
    p = np.zeros((num_s, 3, num_s))
    for s in range(num_s):
        p[s, 0, s] = 1.0
        up, down = min(s + 1, num_s - 1), max(s - 1, 0)
        p[s, 1, up] += p_up
        p[s, 1, s] += 1 - p_up
        p[s, 2, down] += p_down
        p[s, 2, s] += 1 - p_down
    value = np.asarray(LEVEL_EUROS)
    r = np.stack([hold * value, plus * value, minus * value], axis=1)
    r = r / r.max()
    return (np.broadcast_to(p, (horizon, *p.shape)).copy(),
            np.broadcast_to(r, (horizon, *r.shape)).copy())


def investment_mdp(n: int = 100, horizon: int = 5) -> MDP:
    """The investment MDP with s_0 = M on a grid of n points per unit of return."""
    p, r = investment_arrays(horizon)
    return make_mdp(p, r, s0=1, n=n)


def gamble_arrays(p_win: float = 0.6, sure: float = 0.5):
    """A one-decision MDP with closed-form preferences, H = 2, S = 4, A = 2 (tests, README).

    At s_0 = 0, action 0 ("sure") leads to state 1, which pays `sure` at step 1; action 1
    ("gamble") leads to state 2 (pays 1) with probability p_win, else to state 3 (pays 0).
    With U normalised to U(0) = 0, U(2) = 2: E[G] prefers the gamble iff p_win > sure, √(2G)
    iff p_win > √sure, G²/2 iff p_win > sure². Returns (p (2, 4, 2, 4), r (2, 4, 2)).
    """
    p = np.zeros((2, 4, 2, 4))
    p[0, 0, 0, 1] = 1.0
    p[0, 0, 1, 2], p[0, 0, 1, 3] = p_win, 1 - p_win
    p[0, 1:, :, 0] = 1.0
    p[1, :, :, 0] = 1.0
    r = np.zeros((2, 4, 2))
    r[1, 1, :], r[1, 2, :] = sure, 1.0
    return p, r


def random_arrays(rng: np.random.Generator, num_s: int, num_a: int, horizon: int):
    """Random MDP of the paper's simulations: r ~ U[0, 1], p(·|s, a, h) = normalised U[0, 1]^S."""
    p = rng.random((horizon, num_s, num_a, num_s), dtype=np.float32)
    p /= p.sum(axis=-1, keepdims=True)
    r = rng.random((horizon, num_s, num_a))
    return p, r


def random_mdp(seed: int, num_s: int, num_a: int, horizon: int, n: int) -> MDP:
    """One random MDP (s_0 = 1, as in the paper's code) from `seed`."""
    p, r = random_arrays(np.random.default_rng(seed), num_s, num_a, horizon)
    return make_mdp(p, r, s0=1 if num_s > 1 else 0, n=n)


def stack_mdps(mdps: list[MDP]) -> MDP:
    """Stack environments of equal shape along a new leading axis (for vmap)."""
    return MDP(*(jnp.stack([getattr(m, f) for m in mdps]) for f in MDP._fields))


def noisy_policy(policy: np.ndarray, rng: np.random.Generator, flip: float,
                 num_a: int) -> np.ndarray:
    """An expert that deviates: each entry π_h(s, y) is changed with probability `flip`, to
    a − 1 (or 1 when a = 0), like the paper's `inject_noise` (which changes ⌊Y/4⌋ random
    entries per (h, s))."""
    policy = np.asarray(policy)
    flips = rng.random(policy.shape) < flip
    other = np.where(policy == 0, min(1, num_a - 1), policy - 1)
    return np.where(flips, other, policy).astype(np.int32)


# ----------------------------------------------------------------------------- participants


class Checkpoint(NamedTuple):
    """A question of the MDP questionnaire: step h (0-based), state, cumulative reward index y."""

    h: int
    s: int
    y: int


class Participants(NamedTuple):
    """answers: (P, Q) int actions at the Q checkpoints; checkpoints: their (h, s, y);
    policies: (P, H, S, d) int32 filled policies; sg_utilities: (P, d) float64;
    sg_points: (Q_sg,) returns of the SG questions; sg_answers: (P, Q_sg)."""

    answers: np.ndarray
    checkpoints: tuple
    policies: np.ndarray
    sg_utilities: np.ndarray
    sg_points: np.ndarray
    sg_answers: np.ndarray


def _read_csv(path: str) -> tuple[list[str], list[list[str]]]:
    if not os.path.isfile(path):
        raise FileNotFoundError(f"participants file {path!r} not found; point "
                                f"'participants.data_dir' at the directory holding "
                                f"{MDP_FILE} and {SG_FILE}")
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if any(cell.strip() for cell in r)]
    if len(rows) < 2:
        raise ValueError(f"{path}: expected a header and at least one participant row")
    header, body = [c.strip() for c in rows[0]], rows[1:]
    for i, row in enumerate(body):
        if len(row) != len(header):
            raise ValueError(f"{path}: row {i + 2} has {len(row)} cells, header has {len(header)}")
    return header, [[c.strip() for c in row] for row in body]


def parse_checkpoint(name: str, n: int, horizon: int) -> Checkpoint:
    """`MDP_<h>_<state>_<euros>` → Checkpoint(h − 1, state index, grid index of the euros)."""
    m = re.fullmatch(r"MDP_(\d+)_([LMHT])_(\d+)", name)
    if not m:
        raise ValueError(f"column {name!r} is not of the form MDP_<h>_<L|M|H|T>_<euros>")
    h, s, euros = int(m.group(1)) - 1, STATES.index(m.group(2)), float(m.group(3))
    y = euros / EUROS_PER_UNIT * n
    if not 0 <= h < horizon or abs(y - round(y)) > 1e-9 or round(y) > h * n:
        raise ValueError(f"column {name!r}: step {h + 1} or {euros:g} € is not a reachable "
                         f"checkpoint on a grid of {EUROS_PER_UNIT / n:g} € (H = {horizon})")
    return Checkpoint(h, s, round(y))


def fill_policy(answers: np.ndarray, checkpoints, n: int, horizon: int) -> np.ndarray:
    """One participant's policy (H, S, d) int32 from their answers (see module docstring).

    Cells no rule covers hold −1 (callers check they are never reached)."""
    d = grid_size(horizon, n)
    pi = -np.ones((horizon, len(STATES), d), np.int32)
    pi[1:, 0, :] = ACTIONS.index("a+")
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for (h, s, y), a in zip(checkpoints, answers):
        groups.setdefault((h, s), []).append((y, int(a)))
    grid = np.arange(d)
    for (h, s), pts in groups.items():
        ys = np.array([p[0] for p in pts])
        acts = np.array([p[1] for p in pts])
        order = np.argsort(ys, kind="stable")
        ys, acts = ys[order], acts[order]
        nearest = np.argmin(np.abs(grid[:, None] - ys[None, :]), axis=1)   # ties → lower y
        pi[h, s, :] = acts[nearest]
    pi[horizon - 1, :, :] = ACTIONS.index("a-")
    return pi


def load_participants(data_dir: str, n: int = 100, horizon: int = 5) -> Participants:
    """Read data_MDP.csv and data_SG.csv from `data_dir` (see module docstring)."""
    header, rows = _read_csv(os.path.join(data_dir, MDP_FILE))
    checkpoints = tuple(parse_checkpoint(c, n, horizon) for c in header)
    answers = np.zeros((len(rows), len(header)), np.int32)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if cell not in ACTIONS:
                raise ValueError(f"{MDP_FILE}: participant {i}, column {header[j]!r}: action "
                                 f"{cell!r} is not one of {list(ACTIONS)}")
            answers[i, j] = ACTIONS.index(cell)
    sg_header, sg_rows = _read_csv(os.path.join(data_dir, SG_FILE))
    if len(sg_rows) != len(rows):
        raise ValueError(f"{SG_FILE} has {len(sg_rows)} participants, {MDP_FILE} {len(rows)}")
    euros = []
    for c in sg_header:
        m = re.fullmatch(r"SG_(\d+)", c)
        if not m or not 0 < float(m.group(1)) < SG_PRIZE_EUROS:
            raise ValueError(f"{SG_FILE}: column {c!r} is not SG_<euros> with 0 < euros < "
                             f"{SG_PRIZE_EUROS:g}")
        euros.append(float(m.group(1)))
    if np.any(np.diff(euros) <= 0):
        raise ValueError(f"{SG_FILE}: the SG amounts {euros} must increase")
    sg = np.array([[float(c) for c in row] for row in sg_rows])
    if np.any(~np.isfinite(sg)) or np.any(sg < 0) or np.any(sg > 1):
        i, j = np.argwhere(~np.isfinite(sg) | (sg < 0) | (sg > 1))[0]
        raise ValueError(f"{SG_FILE}: participant {i}, {sg_header[j]}: {sg[i, j]!r} is not a "
                         "probability")
    x = np.concatenate([[0.0], np.asarray(euros), [SG_PRIZE_EUROS]]) / EUROS_PER_UNIT
    utilities = np.stack([interpolate(x, np.concatenate([[0.0], horizon * row, [horizon]]),
                                      horizon, n) for row in sg])
    policies = np.stack([fill_policy(a, checkpoints, n, horizon) for a in answers])
    return Participants(answers, checkpoints, policies, utilities,
                        np.asarray(euros) / EUROS_PER_UNIT, sg)


def non_markovian(answers: np.ndarray, checkpoints) -> np.ndarray:
    """Per participant, the number of (h, state) questions answered at two or more
    cumulative rewards with different actions, (P,) int — the paper's test (Exp. 1): a
    Markovian policy π_h(s) cannot depend on the cumulative reward y."""
    groups: dict[tuple[int, int], list[int]] = {}
    for j, (h, s, _) in enumerate(checkpoints):
        groups.setdefault((h, s), []).append(j)
    multi = [cols for cols in groups.values() if len(cols) > 1]
    return np.array([sum(len(set(row[cols])) > 1 for cols in multi) for row in answers])
