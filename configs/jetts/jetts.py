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
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.jetts.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")


def _lm_block(*, d_model, num_layers, num_heads, d_ff, max_len, num_train, batch, lr, steps,
              warmup, log_every, checkpoint_every, source="local", served_model="",
              base_url="", dtype="float32"):
    return ml_collections.ConfigDict(dict(
        source=source, num_train=num_train, batch_size=batch,
        model=dict(d_model=d_model, num_layers=num_layers, num_heads=num_heads, d_ff=d_ff,
                   max_len=max_len, dtype=dtype),
        optim=dict(lr=lr, warmup_steps=warmup, weight_decay=0.01, grad_clip=1.0),
        train=train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every),
        served=dict(base_url=base_url, model=served_model, cache_dir="", api_key_env="")))


def _build(*, tag, digits, num_queries, num_tree_queries, gen, judge, rm_queries, rm_samples,
           rm_steps, rm_batch, n, m, num_sampled, he_problems, he_pool, if_queries, if_pool,
           refine_queries, accuracies=(0.6, 0.75, 0.9), judge_fmt="compact",
           judge_max_tokens=40, max_tokens=48, instruction=False, num_bootstrap=1000,
           rm_lr=1e-3, mesh_data=1, judge_init_from_generator=True,
           rm_logprob_feature=True, max_truncation_rate=0.02, he_tree_problems=0,
           he_tree_depth=3):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.domains = ("arithmetic", "humaneval", "instructions")
    c.arithmetic = dict(digits=digits, test_fraction=0.1, num_queries=num_queries,
                        num_tree_queries=num_tree_queries, instruction=instruction)
    c.generator = gen
    c.generator.refine_fraction = 0.3
    c.judge_lm = judge
    c.judge_lm.fmt = judge_fmt
    c.judge_lm.max_tokens = judge_max_tokens
    c.judge_lm.init_from_generator = judge_init_from_generator
    c.reward = ml_collections.ConfigDict(dict(
        kinds=("orm", "prm"), num_train_queries=rm_queries, samples_per_query=rm_samples,
        synthetic=True, logprob_feature=rm_logprob_feature,
        aggregation="min", batch_size=rm_batch,
        optim=dict(lr=rm_lr, warmup_steps=10, weight_decay=0.0, grad_clip=1.0),
        train=train_block(rm_steps, log_every=max(1, rm_steps // 10),
                          checkpoint_every=max(1, rm_steps // 2))))
    c.pools = dict(num_sampled=num_sampled, temperature=1.0, top_p=0.95, max_tokens=max_tokens)
    c.tree = dict(n=n, m=m, step_max_tokens=16)
    c.simulated = dict(accuracies=tuple(accuracies), position_bias=0.3, length_bias=0.0,
                       tie_rate=0.05, malformed_rate=0.05)
    c.protocols = dict(rerank_methods=("likert", "additive", "round_robin", "knockout"),
                       beam_methods=("likert", "additive", "round_robin"), lookahead=True,
                       refine_queries=refine_queries, refine_iterations=2)
    c.humaneval = dict(num_problems=he_problems, pool_size=he_pool,
                       tree_problems=he_tree_problems, tree_depth=he_tree_depth, tree_keep=0.6)
    c.instructions = dict(num_queries=if_queries, pool_size=if_pool)
    c.eval = dict(num_bootstrap=num_bootstrap, plots=True,
                  max_truncation_rate=max_truncation_rate)
    c.mesh = mesh_block(data=mesh_data)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="jetts_tiny", digits=2, num_queries=4, num_tree_queries=2,
            gen=_lm_block(d_model=32, num_layers=1, num_heads=2, d_ff=64, max_len=192,
                          num_train=64, batch=16, lr=3e-3, steps=4, warmup=1, log_every=2,
                          checkpoint_every=4),
            judge=_lm_block(d_model=32, num_layers=1, num_heads=2, d_ff=64, max_len=192,
                            num_train=32, batch=16, lr=3e-3, steps=2, warmup=1, log_every=1,
                            checkpoint_every=2),
            rm_queries=8, rm_samples=2, rm_steps=2, rm_batch=8, n=2, m=2, num_sampled=3,
            he_problems=2, he_pool=3, if_queries=4, if_pool=4, refine_queries=2,
            accuracies=(0.8,), judge_max_tokens=8, max_tokens=16, num_bootstrap=50,
            mesh_data=-1, judge_init_from_generator=False,
            # a 2-step judge LM writes noise until max_tokens: cut replies allowed here
            max_truncation_rate=1.0, he_tree_problems=1, he_tree_depth=2),
        "quick": lambda: _build(
            tag="jetts_quick", digits=3, num_queries=60, num_tree_queries=30,
            gen=_lm_block(d_model=64, num_layers=2, num_heads=2, d_ff=256, max_len=208,
                          num_train=20_000, batch=32, lr=2e-3, steps=300, warmup=30,
                          log_every=25, checkpoint_every=100),
            judge=_lm_block(d_model=64, num_layers=2, num_heads=2, d_ff=256, max_len=208,
                            num_train=30_000, batch=32, lr=1e-3, steps=800, warmup=30,
                            log_every=25, checkpoint_every=100),
            rm_queries=1500, rm_samples=4, rm_steps=1000, rm_batch=32, n=4, m=2, num_sampled=9,
            he_problems=20, he_pool=8, if_queries=40, if_pool=10, refine_queries=30,
            # longest well-formed reply: 67 tokens + stop (local_training.longest_judge_reply)
            judge_max_tokens=80, he_tree_problems=20, he_tree_depth=3),
        "paper": lambda: _build(
            tag="jetts_paper", digits=16, num_queries=1319, num_tree_queries=500,
            gen=_lm_block(d_model=1024, num_layers=24, num_heads=16, d_ff=4096, max_len=2048,
                          num_train=1_000_000, batch=256, lr=3e-4, steps=20_000, warmup=1000,
                          log_every=100, checkpoint_every=1000, source="served",
                          served_model="meta-llama/Llama-3.1-8B-Instruct",
                          base_url="http://localhost:8000/v1", dtype="bfloat16"),
            judge=_lm_block(d_model=1024, num_layers=24, num_heads=16, d_ff=4096, max_len=2048,
                            num_train=1_000, batch=256, lr=3e-4, steps=1, warmup=0,
                            log_every=1, checkpoint_every=1, source="served",
                            served_model="prometheus-eval/prometheus-7b-v2.0",
                            base_url="http://localhost:8001/v1"),
            rm_queries=50_000, rm_samples=8, rm_steps=10_000, rm_batch=128, n=8, m=2,
            num_sampled=9, he_problems=164, he_pool=10, if_queries=541, if_pool=10,
            refine_queries=300, judge_fmt="prometheus", judge_max_tokens=1024, max_tokens=1024,
            instruction=True, num_bootstrap=2000, mesh_data=-1, he_tree_problems=164,
            he_tree_depth=4,
            judge_init_from_generator=False),
    }, arg, default="quick")
