"""JETTS: judges vs reward models in reranking, step-level beam search and refinement.

    python experiments/jetts/main.py --config=configs/jetts/jetts.py:quick --workdir=workdirs/jetts_quick

Variants:
  tiny    2-digit sums, a 1-layer generator / judge LM and RMs trained a few steps, 4 queries,
          trees N=2, M=2; HumanEval 2 problems, instructions 4 queries (tests; seconds).
  quick   3-digit sums; generator 2 layers x 64 trained briefly (it makes mistakes), judge
          LM = the generator fine-tuned 800 steps on judge prompts, ORM and PRM fine-tuned from the generator; 60 pools of 1 greedy
          + 9 sampled, 30 full trees N=4, M=2, d=4; every judge x protocol; judge replies
          up to 80 tokens (the longest well-formed one is 67 + stop); HumanEval 20 problems
          x 8 candidates and 20 mutant step trees (3 chunks) for beam search, instructions
          40 x 10 (well under an hour on 2 cores).
  paper   the paper's setting pointed at served models: a 7B-70B generator (here
          Llama-3.1-8B-Instruct) and a judge (Prometheus-7B-v2.0 in its format) behind
          OpenAI-compatible endpoints (vLLM / SGLang), 16-digit sums with the written
          instruction, 1 greedy + 9 samples at T=1 / top-p .95, trees N=8, M=2,
          max_tokens 1024 for the judge; ORM / PRM fine-tuned from a 0.3 B workspace LM on an
          accelerator; HumanEval 164 problems. Not run here.
"""
from lib.common.config import variant_config
from lib.jetts.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "jetts_tiny", "mesh.data": 1, "arithmetic.digits": 2, "arithmetic.num_queries": 4,
             "arithmetic.num_tree_queries": 2, "generator.num_train": 64,
             "generator.batch_size": 16, "generator.model.d_model": 32,
             "generator.model.num_layers": 1, "generator.model.d_ff": 64,
             "generator.model.max_len": 192, "generator.optim.lr": 3e-3,
             "generator.optim.warmup": 1, "generator.train.num_steps": 4,
             "generator.train.log_every": 2, "generator.train.checkpoint_every": 4,
             "judge_lm.max_tokens": 8, "judge_lm.num_train": 32, "judge_lm.batch_size": 16,
             "judge_lm.model.d_model": 32, "judge_lm.model.num_layers": 1,
             "judge_lm.model.d_ff": 64, "judge_lm.model.max_len": 192,
             "judge_lm.optim.lr": 3e-3, "judge_lm.optim.warmup": 1,
             "judge_lm.train.num_steps": 2, "judge_lm.train.checkpoint_every": 2,
             "reward.num_train_queries": 8, "reward.samples_per_query": 2,
             "reward.batch_size": 8, "reward.train.num_steps": 2, "reward.train.log_every": 1,
             "reward.train.checkpoint_every": 1, "pools.num_sampled": 3, "pools.max_tokens": 16,
             "tree.n": 2, "simulated.accuracies": (0.8,), "protocols.refine_queries": 2,
             "humaneval.num_problems": 2, "humaneval.pool_size": 3, "humaneval.tree_problems": 1,
             "humaneval.tree_depth": 2, "instructions.num_queries": 4,
             "instructions.pool_size": 4, "eval.num_bootstrap": 50,
             "eval.max_truncation_rate": 1.0}),
        "quick": lambda: config(
            {"tag": "jetts_quick", "arithmetic.digits": 3, "arithmetic.num_queries": 60,
             "arithmetic.num_tree_queries": 30, "generator.num_train": 20_000,
             "generator.batch_size": 32, "generator.model.d_model": 64,
             "generator.model.num_layers": 2, "generator.model.d_ff": 256,
             "generator.model.max_len": 208, "generator.optim.lr": 2e-3,
             "generator.optim.warmup": 30, "generator.train.num_steps": 300,
             "generator.train.log_every": 25, "generator.train.checkpoint_every": 100,
             "judge_lm.max_tokens": 80, "judge_lm.num_train": 30_000,
             "judge_lm.init_from_generator": True, "judge_lm.batch_size": 32,
             "judge_lm.model.d_model": 64, "judge_lm.model.num_layers": 2,
             "judge_lm.model.d_ff": 256, "judge_lm.model.max_len": 208,
             "judge_lm.optim.lr": 0.001, "judge_lm.optim.warmup": 30,
             "judge_lm.train.num_steps": 800, "judge_lm.train.log_every": 25,
             "judge_lm.train.checkpoint_every": 100, "reward.num_train_queries": 1500,
             "reward.samples_per_query": 4, "reward.batch_size": 32,
             "reward.train.num_steps": 1000, "reward.train.log_every": 100,
             "reward.train.checkpoint_every": 500, "pools.max_tokens": 48, "tree.n": 4,
             "protocols.refine_queries": 30, "humaneval.num_problems": 20,
             "humaneval.pool_size": 8, "humaneval.tree_problems": 20, "humaneval.tree_depth": 3,
             "instructions.num_queries": 40, "eval.num_bootstrap": 1000, "mesh.data": 1}),
        "paper": lambda: config(
            {"tag": "jetts_paper", "arithmetic.digits": 16, "arithmetic.num_queries": 1319,
             "arithmetic.num_tree_queries": 500, "arithmetic.instruction": True,
             "generator.source": "served", "generator.num_train": 1_000_000,
             "generator.batch_size": 256, "generator.model.d_model": 1024,
             "generator.model.num_layers": 24, "generator.model.num_heads": 16,
             "generator.model.d_ff": 4096, "generator.model.max_len": 2048,
             "generator.model.dtype": "bfloat16", "generator.optim.lr": 3e-4,
             "generator.optim.warmup": 1000, "generator.train.num_steps": 20_000,
             "generator.train.log_every": 100, "generator.train.checkpoint_every": 1000,
             "generator.served.base_url": "http://localhost:8000/v1",
             "generator.served.model": "meta-llama/Llama-3.1-8B-Instruct",
             "judge_lm.source": "served", "judge_lm.fmt": "prometheus",
             "judge_lm.max_tokens": 1024, "judge_lm.num_train": 1000, "judge_lm.batch_size": 256,
             "judge_lm.model.d_model": 1024, "judge_lm.model.num_layers": 24,
             "judge_lm.model.num_heads": 16, "judge_lm.model.d_ff": 4096,
             "judge_lm.model.max_len": 2048, "judge_lm.optim.lr": 3e-4,
             "judge_lm.optim.warmup": 0, "judge_lm.train.num_steps": 1,
             "judge_lm.train.checkpoint_every": 1,
             "judge_lm.served.base_url": "http://localhost:8001/v1",
             "judge_lm.served.model": "prometheus-eval/prometheus-7b-v2.0",
             "reward.num_train_queries": 50_000, "reward.samples_per_query": 8,
             "reward.batch_size": 128, "reward.train.num_steps": 10_000,
             "reward.train.log_every": 1000, "reward.train.checkpoint_every": 5000,
             "pools.max_tokens": 1024, "tree.n": 8, "protocols.refine_queries": 300,
             "humaneval.num_problems": 164, "humaneval.pool_size": 10,
             "humaneval.tree_problems": 164, "humaneval.tree_depth": 4,
             "instructions.num_queries": 541, "eval.num_bootstrap": 2000}),
    }, arg, default="quick")
