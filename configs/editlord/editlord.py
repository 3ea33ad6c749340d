"""EditLord: explicit code-transformation rules for code editing.

    python experiments/editlord/main.py --config=configs/editlord/editlord.py:quick \
        --workdir=workdirs/editlord_quick

Variants:
  tiny    20 HumanEval problems, single injected rules, no test runs during pair building,
          Jaccard similarity, 6 extra training pairs from the standard library's
          `collections` package, identifier abstraction on, a 1-layer editor trained a
          few steps in two variants (tests; seconds).
  quick   all 164 HumanEval problems, up to 3 injected rules per pair, tests run on every
          pair; train / held-out split by clusters of near-duplicate problems
          (data.near_dup_threshold 0.8: shape-token similarity, lib/editlord/dedup.py);
          offline rule learner with MiniLM similarity; up to 3000 extra training pairs (2
          per function) with the same injected rules in functions of the interpreter's
          standard library (data.corpus = "stdlib", read at run time; no tests, so training
          only); editor 2 layers x 96 (BPE) trained from scratch, 1200 steps of 8, answering
          with a line-addressed edit script (editor.target_format = "edit_script"; "code"
          regenerates the whole function), on the training pairs plus 4 copies of each with
          its parameters and locals renamed (editor.rename_copies), on identifier-abstract
          code (the function's own names as f0 / v0 placeholders, the reply mapped back;
          editor.abstract_identifiers), in the two variants the targets compare (source ->
          target and +spec+rules; `--config.editor.variants` adds the other two, which a
          shared 2-core machine had no time for); evaluation on the held-out problems, clean
          and under the three perturbations (minutes to an hour on 2 cores).
  paper   the paper's setting for accelerators and a served LM: rule learning by a served
          model (the paper uses GPT-4-class models) with the paper's prompts, prompting
          and iterative modes against it, a 0.3 B-parameter editor fine-tuned for 2 epochs
          (batch 32, lr 1e-5 in the paper; here from scratch, so a larger lr); the
          edit-script format unless editor.target_format = "code"; no renamed copies and
          no identifier abstraction (a pretrained LM copies names already, and reads them).
          Not run here.
"""
from lib.common.config import variant_config
from lib.editlord.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "tiny", "data.num_problems": 20, "data.max_rules": 1,
             "data.max_pairs_per_problem": 2, "data.max_chars": 400, "data.run_tests": False,
             "data.corpus_subdir": "collections", "data.corpus_max_pairs": 6,
             "data.corpus_pairs_per_unit": 1, "rules.similarity": "jaccard",
             "rules.min_support": 1, "editor.rename_copies": 1, "editor.bpe_merges": 20,
             "editor.batch_size": 2, "editor.max_new_tokens": 24, "editor.model.d_model": 32,
             "editor.model.num_layers": 1, "editor.model.num_heads": 2, "editor.model.d_ff": 64,
             "editor.model.max_len": 512, "editor.optim.lr": 1e-3,
             "editor.optim.warmup": 0, "train.num_steps": 3, "train.log_every": 1,
             "train.checkpoint_every": 3, "eval.max_test_pairs": 2,
             "eval.perturbations": ("rename",)}),
        "quick": lambda: config(
            {"tag": "quick", "data.max_rules": 3, "data.max_pairs_per_problem": 12,
             "data.max_chars": 450, "data.corpus_max_pairs": 3000,
             "data.corpus_pairs_per_unit": 2, "rules.min_support": 2, "editor.rename_copies": 4,
             "editor.bpe_merges": 400, "editor.batch_size": 8, "editor.max_new_tokens": 270,
             "editor.model.d_model": 96, "editor.model.num_layers": 2,
             "editor.model.num_heads": 4, "editor.model.d_ff": 384, "editor.model.max_len": 480,
             "editor.optim.lr": 2e-3, "editor.optim.warmup": 100, "train.num_steps": 1200,
             "train.log_every": 25, "train.checkpoint_every": 100, "eval.max_test_pairs": 80}),
        "paper": lambda: config(
            {"tag": "paper", "data.max_rules": 4, "data.max_pairs_per_problem": 20,
             "data.max_chars": 4000, "data.corpus_max_pairs": 100_000,
             "data.corpus_pairs_per_unit": 4, "rules.backend": "served", "rules.min_support": 3,
             "served.base_url": "http://localhost:8000/v1",
             "served.model": "meta-llama/Llama-3.1-8B-Instruct",
             "editor.variants": ("base", "spec", "rules", "spec_rules"),
             "editor.rename_copies": 0, "editor.abstract_identifiers": False,
             "editor.bpe_merges": 8000, "editor.batch_size": 32, "editor.max_new_tokens": 1024,
             "editor.model.d_model": 1024, "editor.model.num_layers": 24,
             "editor.model.num_heads": 16, "editor.model.d_ff": 4096,
             "editor.model.max_len": 2048, "editor.model.dtype": "bfloat16",
             "editor.optim.lr": 3e-4, "editor.optim.warmup": 500,
             "train.num_steps": 20_000, "train.log_every": 100, "train.checkpoint_every": 1000,
             "eval.max_test_pairs": 10_000, "eval.prompting": True}),
    }, arg, default="quick")
