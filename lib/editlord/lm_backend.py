"""Rule learning with a served language model (the paper's prompt structure).

Every step is one chat request through `lib.lm.client.LanguageModel` (an `OpenAIClient`
for vLLM / SGLang / a hosted API / tools/serve_lm.py, or a `LocalLM`), greedy:

  extract   the two programs, the current rule hierarchy, and the instruction to reason
            in [REASONING]...[/REASONING] and list the applied strategies, one
            "switch from X to Y" per line, in [APPLIED_STRATEGIES]...[/APPLIED_STRATEGIES]
  spec      the target code -> a JSON object {problem_description, input, output}
  balanced  "The rule is generic." / "... specific." / "... well-balanced."
  similar   YES / NO
  merge     one rule in [MERGED]...[/MERGED]
  reformat  concise, atomic, independent rules in [RULES]...[/RULES]
  manifest  the numbered rules, the two programs -> rule numbers in
            [ROOT CAUSES]...[/ROOT CAUSES] (X occurs in the source, Y in the target)

A reply that breaks the format raises `LMFormatError` (a ValueError) naming the step and
the start of the reply; `learner.extract_all` counts and logs such pairs as skipped, and
the yes/no steps count the failure in `self.format_errors` and answer conservatively
(not balanced -> prune; not similar -> add; unparsable merge -> keep r*).
"""
from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Sequence

from lib.editlord import rulebook
from lib.editlord.learner import Backend
from lib.editlord.pairs import Pair
from lib.editlord.rulebook import Rule
from lib.lm.client import LanguageModel

log = logging.getLogger(__name__)
SYSTEM = ("You are an expert software engineer who explains code edits as explicit, "
          "reusable code-transformation rules.")


class LMFormatError(ValueError):
    pass


def _block(text: str, tag: str, step: str) -> str:
    m = re.search(rf"\[{tag}\](.*?)\[/{tag}\]", text, re.DOTALL)
    if not m:
        raise LMFormatError(f"{step}: reply lacks [{tag}]...[/{tag}]: {text[:200]!r}")
    return m.group(1).strip()


def _lines(block: str) -> list[str]:
    out = []
    for line in block.splitlines():
        line = re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", line).strip()
        if line:
            out.append(line)
    return out


def _rules_from_lines(lines: Sequence[str], step: str) -> list[Rule]:
    rules = []
    for line in lines:
        xy = rulebook.parse_switch(line)
        if xy is not None:
            rules.append(Rule(line, (xy,)))
        elif line.lower().startswith("use "):
            rules.append(Rule(line, (("(any)", line[4:].strip()),)))
    if not rules:
        raise LMFormatError(f"{step}: no 'switch from X to Y' line in {list(lines)[:3]!r}")
    return rules


def hierarchy_text(rules: Sequence[Rule]) -> str:
    return "\n".join(f"- {r.text}" for r in rules) or "(none yet)"


class ServedBackend(Backend):
    """The LM steps of rule learning asked of a `LanguageModel` (module docstring)."""

    def __init__(self, lm: LanguageModel, *, max_tokens: int = 1024, src_tag: str = "SOURCE CODE",
                 tgt_tag: str = "TARGET CODE", examples: str = ""):
        self.lm, self.max_tokens = lm, max_tokens
        self.src_tag, self.tgt_tag, self.examples = src_tag, tgt_tag, examples
        self.hierarchy: list[Rule] = []
        self.format_errors: Counter = Counter()

    def _ask(self, user: str) -> str:
        r = self.lm.chat([{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                         temperature=0.0, max_tokens=self.max_tokens, seed=0)
        return r.choices[0].text

    def _codes(self, src: str, tgt: str | None) -> str:
        s = f"[{self.src_tag}]\n{src}\n[/{self.src_tag}]\n"
        if tgt is not None:
            s += f"[{self.tgt_tag}]\n{tgt}\n[/{self.tgt_tag}]\n"
        return s

    # ---------------------------------------------------------------- steps
    def extract(self, pair: Pair) -> list[Rule]:
        prompt = (f"{self.examples}{self._codes(pair.source, pair.target)}"
                  f"Current rule hierarchy:\n{hierarchy_text(self.hierarchy)}\n\n"
                  "Explain how the source code was turned into the target code inside "
                  "[REASONING] and [/REASONING]. Then list every applied strategy, one per "
                  "line, in the form 'switch from X to Y', inside [APPLIED_STRATEGIES] and "
                  "[/APPLIED_STRATEGIES].")
        text = self._ask(prompt)
        return _rules_from_lines(_lines(_block(text, "APPLIED_STRATEGIES", "extract")), "extract")

    def spec(self, code: str) -> dict:
        text = self._ask(f"[CODE]\n{code}\n[/CODE]\nDescribe what this code does as a JSON "
                         'object {"problem_description": ..., "input": ..., "output": ...}.')
        m = re.search(r"\{.*\}", text, re.DOTALL)
        try:
            d = json.loads(m.group(0)) if m else None
        except json.JSONDecodeError:
            d = None
        if not isinstance(d, dict) or not {"problem_description", "input", "output"} <= set(d):
            raise LMFormatError(f"spec: reply is not a JSON object with problem_description, "
                                f"input, output: {text[:200]!r}")
        return {k: str(d[k]) for k in ("problem_description", "input", "output")}

    def balanced(self, rule: Rule) -> bool:
        text = self._ask(f"Rule: {rule.text}\nIs this code-transformation rule too generic "
                         "(it applies to almost any code), too specific (it applies only to "
                         "one program) or well-balanced? Answer with one sentence: 'The rule "
                         "is generic.', 'The rule is specific.' or 'The rule is "
                         "well-balanced.'")
        m = re.search(r"the rule is (generic|specific|well[- ]balanced)", text, re.IGNORECASE)
        if not m:
            self.format_errors["balanced"] += 1
            log.warning("balanced: unreadable reply %r; pruning the rule", text[:120])
            return False
        return m.group(1).lower().startswith("well")

    def similar(self, a: Rule, b: Rule) -> bool:
        text = self._ask(f"Rule A: {a.text}\nRule B: {b.text}\nDo rules A and B describe the "
                         "same code transformation? Answer YES or NO.")
        m = re.search(r"\b(YES|NO)\b", text)
        if not m:
            self.format_errors["similar"] += 1
            log.warning("similar: unreadable reply %r; treating as not similar", text[:120])
            return False
        return m.group(1) == "YES"

    def merge(self, a: Rule, b: Rule) -> Rule:
        text = self._ask(f"Rule A: {a.text}\nRule B: {b.text}\nMerge them into one rule of "
                         "the form 'switch from X to Y' inside [MERGED] and [/MERGED].")
        try:
            rules = _rules_from_lines(_lines(_block(text, "MERGED", "merge")), "merge")
        except LMFormatError as e:
            self.format_errors["merge"] += 1
            log.warning("%s; keeping %r", e, a.text)
            return a
        return rules[0]

    def reformat(self, rules: Sequence[Rule]) -> list[Rule]:
        if not rules:
            return []
        text = self._ask("Rules:\n" + hierarchy_text(rules) + "\nRestructure them into "
                         "concise, atomic and independent rules, one per line, each 'switch "
                         "from X to Y' or 'use X', inside [RULES] and [/RULES].")
        try:
            out = _rules_from_lines(_lines(_block(text, "RULES", "reformat")), "reformat")
        except LMFormatError as e:
            self.format_errors["reformat"] += 1
            log.warning("%s; keeping the rules as they are", e)
            out = list(rules)
        out = [r.with_(id=f"R{i + 1}") for i, r in enumerate(out)]
        self.hierarchy = out
        return out

    def manifest(self, source: str, target: str | None, rules: Sequence[Rule]) -> list[Rule]:
        listing = "\n".join(f"{i + 1}. {r.text}" for i, r in enumerate(rules))
        where = ("whose 'from' part occurs in the source code and whose 'to' part occurs in "
                 "the target code" if target is not None else
                 "whose 'from' part occurs in the source code")
        text = self._ask(f"{self._codes(source, target)}Rules:\n{listing}\nList the numbers "
                         f"of the rules {where}, comma-separated, inside [ROOT CAUSES] and "
                         "[/ROOT CAUSES].")
        block = _block(text, "ROOT CAUSES", "manifest")
        nums = [int(n) for n in re.findall(r"\d+", block)]
        bad = [n for n in nums if not 1 <= n <= len(rules)]
        if bad:
            raise LMFormatError(f"manifest: rule numbers {bad} are not in 1..{len(rules)}")
        return [rules[n - 1] for n in dict.fromkeys(nums)]
