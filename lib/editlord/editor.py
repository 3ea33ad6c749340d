"""The three editing modes: fine-tuning data in four variants, prompting, iterative editing.

Augmented sample (notes: promptManager.py; P(post|pre) = P(spec|pre) P(rule|pre,spec)
P(post|pre,spec,rule)): the user turn holds the code to edit, the assistant turn is

    [SPEC] {"problem_description": ..., "input": ..., "output": ...}        (+spec variants)
    Following editing rules should be applied:                              (+rules variants)
    - switch from `X` to `Y`
    [EDITED CODE]
    <target>
    [/EDITED CODE]

so the editor generates the spec and the rules itself before the code. VARIANTS:
"base" (source -> target), "spec", "rules", "spec_rules".

FORMATS of the code part: "code" (the whole edited function, as above) or "edit_script"
(`edit_script.py`): the user turn shows the source with numbered lines and the code part
is a line-addressed script between [EDIT SCRIPT] tags, applied to the source by the
workspace. The spec -> rules -> code order is the same in both.

Prompting mode gives the rules (those whose X occurs in the source) and optionally the
spec in context to any `LanguageModel`. Iterative mode: edit, run the tests and the rule
checks, re-prompt with the failing test output and the rules still unmet, up to
`max_rounds`.
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence

import jax

from lib.editlord import edit_script, learner
from lib.editlord.pairs import Pair
from lib.editlord.rulebook import Rule
from lib.lm import chat, sampling
from lib.lm.client import LanguageModel

VARIANTS = ("base", "spec", "rules", "spec_rules")
FORMATS = ("code", "edit_script")
SRC_TAG, TGT_TAG, SCRIPT_TAG = "ORIGINAL CODE", "EDITED CODE", "EDIT SCRIPT"
RULES_HEADER = "Following editing rules should be applied:"


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown editor variant {variant!r}; known: {VARIANTS}")


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown editor target format {fmt!r}; known: {FORMATS}")


def user_text(source: str, fmt: str = "code") -> str:
    """The user turn: the source, with numbered lines for the edit-script format."""
    check_format(fmt)
    body = edit_script.numbered(source) if fmt == "edit_script" else source
    return f"[{SRC_TAG}]\n{body}\n[/{SRC_TAG}]"


def code_part(fmt: str, source: str, target: str) -> str:
    """The tagged code part of the assistant turn: the target, or the gold edit script."""
    check_format(fmt)
    if fmt == "code":
        return f"[{TGT_TAG}]\n{target}\n[/{TGT_TAG}]"
    script = edit_script.gold(source, target)
    if not script:
        raise ValueError("source and target are equal: nothing to edit")
    return f"[{SCRIPT_TAG}]\n{script}\n[/{SCRIPT_TAG}]"


def spec_text(spec: dict) -> str:
    return "[SPEC] " + json.dumps(spec, sort_keys=True)


def rules_text(rules: Sequence[Rule]) -> str:
    return RULES_HEADER + "\n" + ("\n".join(f"- {r.text}" for r in rules) if rules else "- none")


def assistant_text(variant: str, target: str, spec: dict | None, rules: Sequence[Rule],
                   fmt: str = "code", source: str | None = None) -> str:
    """spec (+spec variants) -> rules (+rules variants) -> code part (`code_part`; the
    edit-script format needs the source)."""
    check_variant(variant)
    if fmt == "edit_script" and source is None:
        raise ValueError("the edit-script format needs the source")
    parts = []
    if variant in ("spec", "spec_rules"):
        if spec is None:
            raise ValueError(f"variant {variant!r} needs a spec")
        parts.append(spec_text(spec))
    if variant in ("rules", "spec_rules"):
        parts.append(rules_text(rules))
    parts.append(code_part(fmt, source, target))
    return "\n".join(parts)


def conversation(variant: str, pair: Pair, spec: dict | None, rules: Sequence[Rule],
                 fmt: str = "code") -> list[dict]:
    return [{"role": "user", "content": user_text(pair.source, fmt)},
            {"role": "assistant", "content": assistant_text(variant, pair.target, spec, rules,
                                                            fmt, pair.source)}]


def parse_edit(reply: str) -> str | None:
    """The edited code of a reply (between [EDITED CODE] and [/EDITED CODE]; the closing
    tag may be missing when generation was cut), or None when there is none."""
    m = re.search(rf"\[{TGT_TAG}\]\n?(.*?)(?:\[/{TGT_TAG}\]|$)", reply, re.DOTALL)
    if not m or not m.group(1).strip():
        return None
    return m.group(1).strip("\n")


def candidate(reply: str, source: str, fmt: str = "code") -> tuple[str | None, str]:
    """(candidate target or None, failure reason or "") of a reply in format `fmt`.

    "code": the edited code (`parse_edit`), reason "no_code" when there is none.
    "edit_script": the script between [EDIT SCRIPT] and [/EDIT SCRIPT] applied to `source`;
    reason "no_script" when the tags are missing (a cut-off script, whose closing tag never
    came, is not applied) and the `EditScriptError.reason` of a malformed script. Nothing
    is repaired."""
    check_format(fmt)
    if fmt == "code":
        code = parse_edit(reply)
        return code, "" if code is not None else "no_code"
    m = re.search(rf"\[{SCRIPT_TAG}\]\n(.*?)\n?\[/{SCRIPT_TAG}\]", reply, re.DOTALL)
    if not m:
        return None, "no_script"
    try:
        return edit_script.apply(source, m.group(1)), ""
    except edit_script.EditScriptError as e:
        return None, e.reason


def parse_rules(reply: str) -> list[str]:
    """The rule lines an editor generated (after RULES_HEADER, before the code)."""
    if RULES_HEADER not in reply:
        return []
    block = reply.split(RULES_HEADER, 1)[1].split(f"[{TGT_TAG}]", 1)[0].split(f"[{SCRIPT_TAG}]", 1)[0]
    return [ln[2:].strip() for ln in block.splitlines() if ln.startswith("- ") and ln[2:].strip() != "none"]


# ----------------------------------------------------------------------------- generation


def local_greedy(lm, user_texts: Sequence[str], max_tokens: int, max_rows: int = 64) -> list[str]:
    """Greedy replies of a `lib.lm.local.LocalLM` to single-turn prompts, batched."""
    ids = [lm.tok.encode(chat.render_chat([{"role": "user", "content": u}]), allow_special=True)
           for u in user_texts]
    out = []
    for s in range(0, len(ids), max_rows):
        res = sampling.generate(lm.cfg, lm.params, ids[s:s + max_rows], key=jax.random.key(0),
                                n=1, max_tokens=max_tokens, temperature=0.0,
                                stop_ids=lm._stop_ids)
        out += [lm.tok.decode(r[0].tokens) for r in res]
    return out


# ----------------------------------------------------------------------------- prompting


def prompt_messages(source: str, rules: Sequence[Rule], spec: dict | None = None,
                    feedback: str = "") -> list[dict]:
    parts = ["Edit the code so that it keeps its behaviour and applies the editing rules."]
    if spec is not None:
        parts.append(spec_text(spec))
    parts.append(rules_text(rules))
    parts.append(user_text(source))
    if feedback:
        parts.append(feedback)
    parts.append(f"Answer with the edited code between [{TGT_TAG}] and [/{TGT_TAG}].")
    return [{"role": "user", "content": "\n".join(parts)}]


def prompt_edit(lm: LanguageModel, source: str, rules: Sequence[Rule], *, spec: dict | None = None,
                max_tokens: int = 1024, feedback: str = "") -> tuple[str | None, str]:
    """(edited code or None, raw reply) from one greedy request."""
    r = lm.chat(prompt_messages(source, rules, spec, feedback), temperature=0.0,
                max_tokens=max_tokens, seed=0)
    text = r.choices[0].text
    return parse_edit(text), text


@dataclasses.dataclass
class IterativeResult:
    code: str | None
    rounds: int
    passed: bool
    unmet: list[str]
    history: list[dict]


def iterative_edit(lm: LanguageModel, source: str, rules: Sequence[Rule], *,
                   run_tests: Callable[[str], tuple[bool, str]], backend: learner.Backend,
                   spec: dict | None = None, max_rounds: int = 3,
                   max_tokens: int = 1024) -> IterativeResult:
    """Edit -> run tests and rule checks -> re-prompt with what failed (module docstring).

    run_tests(code) -> (passed, detail). A rule is unmet when `backend.manifest(code,
    None, [rule])` still finds its X in the edited code. Stops when the tests pass and no
    rule is unmet, or after `max_rounds` requests."""
    if max_rounds < 1:
        raise ValueError(f"max_rounds = {max_rounds} must be >= 1")
    rules = list(rules)
    feedback, history = "", []
    code, passed, unmet = None, False, [r.text for r in rules]
    for k in range(1, max_rounds + 1):
        code, reply = prompt_edit(lm, source, rules, spec=spec, max_tokens=max_tokens,
                                  feedback=feedback)
        if code is None:
            passed, detail, unmet_rules = False, "no edited code in the reply", rules
        else:
            passed, detail = run_tests(code)
            try:
                unmet_rules = backend.manifest(code, None, rules)
            except SyntaxError as e:
                passed, detail, unmet_rules = False, f"SyntaxError: {e.msg}", rules
        unmet = [r.text for r in unmet_rules]
        history.append({"round": k, "passed": passed, "unmet": unmet, "detail": detail[-300:]})
        if passed and not unmet:
            return IterativeResult(code, k, True, [], history)
        fb = []
        if not passed:
            fb.append(f"The previous edit failed the tests:\n{detail[-300:]}")
        if unmet:
            fb.append("These rules are still unmet:\n" + "\n".join(f"- {u}" for u in unmet))
        feedback = "\n".join(fb)
    return IterativeResult(code, max_rounds, passed, unmet, history)
