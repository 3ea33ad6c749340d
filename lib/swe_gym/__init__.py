"""SWE-Gym (Pan et al., ICML 2025) on the workspace language-model layer (lib/lm).

    instances.py   SWE-bench-format task instances: fields, JSON/JSONL load/save, validation
    templates.py   the 40 workspace-written functions (4 themes) repositories are built from
    repos.py       small pure-Python repositories written by the workspace (modules, tests, git)
    mutations.py   AST bug injection (flipped comparison, off-by-one, dropped branch, ...)
    runtime.py     an instance materialised in a temp git checkout; patches; cached test runs
    grader.py      the SWE-bench resolution rules (FULL / PARTIAL / NO, patch apply failed)
    generate.py    repositories x mutations -> validated instances (F2P/P2P by running tests)
    agent.py       CodeAct-style loop (bash, view/create/str_replace/insert, finish), caps
    policies.py    served-model chat policy, search baseline, workspace-LM workflow policy
    pretrain.py    synthetic line-repair conversations (the workspace LM's base model)
    rft.py         trajectory collection, rejection-sampling fine-tuning with per-instance caps
    verifier.py    YES/NO outcome verifier on trajectories, p(YES)
    scaling.py     Pass@K / Best@K with the subsampling estimator
    expert_iteration.py  batched sampling (PooledLM), warm-start data, McNemar test
  the phases of a run (composed by experiments/swe_gym/train.py):
    runs.py        the run context: folders, caches, limits and stages every phase shares
    benchmark.py   instances stage, split, recheck against a direct pytest run
    baselines.py   search baseline, served model
    workspace_lm.py  tokenizer, base model, policies, fine-tunes (lib.lm.finetune)
    self_improvement.py  warm start, expert-iteration rounds, cap ablation
    verification.py  verifier, Pass@K / Best@K rollouts
    records.py, report.py, plots.py  rollout summaries; targets and tables; figures
"""
