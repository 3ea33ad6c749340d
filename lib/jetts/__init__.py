"""JETTS: judges as evaluators for test-time scaling (Zhou, Xu et al., ICML 2025).

    pools.py          Query / Response / Pool / Tree: stored, reusable generator outputs (JSON)
    judges.py         one `Judge` interface: prompted (Likert, additive, pairwise + critique)
                      for any `lib.lm.client.LanguageModel`, prompt formats and parsers,
                      parse-failure accounting; simulated and oracle judges
    reward_models.py  outcome / process reward models on the workspace LM (JAX) as judges
    training.py       their loss and the `train_loop.Task` that fine-tunes them
    protocols.py      reranking (Likert, additive, round-robin, knockout), step-level beam
                      search over precomputed trees, critique-based refinement + final rerank
    evaluation.py     a judge over a data set under each protocol: the results.json rows
    truncation.py     judge replies cut at max_tokens: preflight check and row warnings
    generators.py     response pools (1 greedy + 9 sampled) and beam-search trees from a model
    metrics.py        top-1, greedy / oracle / random baselines, normalized helpfulness,
                      bootstrap CIs, position-bias and consistency reports
    domains/          arithmetic (exact first wrong step), HumanEval (sandbox-graded),
                      instruction following (programmatic checkers)
    local_training.py chat data teaching the small LM to solve, refine and judge arithmetic
    arithmetic_setup.py  queries per role, pools and trees, reward-model rows
    runs.py           the local generator / judge LM / ORM / PRM fine-tunes
    report.py         targets, markdown tables and plots of a run's results.json
    config_schema.py  what a configs/jetts config may hold
"""
