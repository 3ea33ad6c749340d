"""Risk-sensitive inverse RL: learning utilities from demonstrations (Lazzati & Metelli, ICML 2025).

An agent in a tabular episodic MDP maximises the expected *utility of the return*,
E[U(G)], G = Σ_h r_h. Its optimal policies are Markovian in the enlarged state (s, y), y
the cumulative reward on a grid of step ε₀ = 1/n. Modules:

    mdp.py          the MDP container, input checks, backward induction on (s, y)
    returns.py      return distributions of a policy: exact forward DP and Monte-Carlo
    utilities.py    utility families on the return grid, checks, random feasible utilities
    projection.py   Euclidean projection onto monotone / bounded / Lipschitz utilities (QP)
    caty.py         CATY-UL: (non)compatibility of a utility with demonstrations, threshold
    tractor.py      TRACTOR-UL: projected subgradient descent on the non-compatibility
    data.py         the investment MDP, random MDPs, simulated experts, the participants
    config_schema.py, report.py   experiment config checks and result tables
"""
