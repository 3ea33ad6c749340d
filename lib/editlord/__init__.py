"""EditLord (Li et al., ICML 2025): explicit code-transformation rules for code editing.

    library.py       injected rule library: inverse rewrite, forward rule, checker (ground truth)
    pairs.py         HumanEval before/after pairs with known rules; loader for user pairs
    dedup.py         near-duplicate code (shape-token similarity): clustered train/held-out split
    corpus.py        extra training pairs injected into the standard library's functions
    datasets.py      a run's pair stages (data/pairs, data/corpus_pairs) and clustered split
    patterns.py      AST differences -> abstract "switch from X to Y" code patterns
    rulebook.py      meta-rules and the readable, editable rule book file (JSON lines)
    learner.py       Backend interface, offline backend (AST + MiniLM), Algorithm 1,
                     manifestation, rule-recovery precision / recall
    lm_backend.py    the same backend steps asked of a served LM (paper's prompt structure)
    rule_learning.py a run's backend from its config, rule book, rule recovery
    editor.py        fine-tuning formats (four variants; full code or edit script), prompting
                     and iterative modes
    edit_script.py   line-addressed edit scripts: gold script, strict apply, numbered source
    augment.py       renamed copies of training pairs (identifier copying for small editors)
    samples.py       editor samples: spec + manifested rules, copies, abstraction, chats
    editor_training.py  tokenizer and per-variant fine-tune (lib.lm.finetune)
    evaluation.py    grading, perturbed inputs, scores, local and served evaluation
    abstraction.py   identifier abstraction (f0 / v0 placeholders) and its exact inverse
    perturb.py       semantics-preserving perturbations (robustness)
    report.py        targets, tables, README block (render), plots of a run
    config_schema.py config keys and checks
"""
