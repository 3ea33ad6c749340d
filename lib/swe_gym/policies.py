"""Policies for the agent loop (agent.run_episode): each turns a conversation into the next
assistant message (text and OpenAI-style tool calls).

* `ChatPolicy(lm)`: any `lib.lm.client.LanguageModel` -- a served model through
  `OpenAIClient` (native tool calls, or the `<function=...>` text fallback) or a
  `LocalLM` -- sees the whole conversation with the tool specs (OpenHands CodeAct).
* `SearchPolicy()`: the offline search baseline. It writes the issue's reproduction as
  `reproduce.py` (with a line tracer), runs it, views the modules whose lines the failing
  checks executed, and proposes inverse mutations (`mutations.sites` minus dropped
  branches: flips and swaps undo themselves, +-1 undoes an off-by-one, alternative
  literals undo a wrong default) at those lines in execution order. Each candidate is
  one turn: revert the previous rejected edit, apply the candidate, rerun the
  reproduction. An edit that raises the number of passing checks is kept (so two-site
  bugs are fixed one site at a time); when every check passes and the visible test suite
  has no more failures than before, it calls finish. Dropped branches cannot be undone
  this way: the baseline fails on them by construction.
* `WorkspaceLMPolicy(lm)`: the workspace's small LM inside a fixed workflow (like
  MoatlessTools, the paper's second scaffold): the same reproduction / trace / view
  steps are scripted, and the LM, given a compact prompt (the failing check and the
  executed source lines with their numbers), chooses each edit from a compact action
  vocabulary (the notes' proposal: choose line and mutation) as
  `<|tool_call|>{"name": "fix", "arguments": {"line": N, "op": OP}}<|/tool_call|>`,
  OP in `OPS` (`apply_op`: flip the line's first comparison, +1 / -1 its first integer
  literal, swap its first call's first two arguments), or `finish`; the policy turns a fix
  into a str_replace of that line plus a rerun of the reproduction, whose `REPRO k/n`
  line is the LM's next observation. The LM's own
  compact conversation is kept (`episode_extra()["lm_messages"]`) for rejection-sampling
  fine-tuning.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence

from lib.lm import chat
from lib.swe_gym import agent, mutations

REPRO = "reproduce.py"
RUN_REPRO = f"python3 {REPRO}"
TRACE_REPRO = f"python3 {REPRO} --trace"
RUN_TESTS = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tail -n 5"
_REPRO_RE = re.compile(r"REPRO (\d+)/(\d+)")
_TRACE_RE = re.compile(r"^TRACE (\S+):(\d+)$", re.M)
_IMPORT_RE = re.compile(r"^(from \S+ import .+|import .+)$")

_TRACER = '''import os as _os, sys as _sys
_ROOT, _SEEN = _os.getcwd(), {}
def _tracer(frame, event, arg):
    name = frame.f_code.co_filename
    if name.startswith(_ROOT) and not name.endswith("reproduce.py") and event in ("call", "line"):
        _SEEN.setdefault((_os.path.relpath(name, _ROOT), frame.f_lineno), len(_SEEN))
    return _tracer
'''


def reproduction_script(statement: str) -> str | None:
    """`reproduce.py` from the python code blocks of an issue: every non-import line is a
    check run in its own try block; prints `CHECK i FAILED: ...` and `REPRO passed/total`
    (and with --trace, `TRACE path:line` for each repository line executed, in order)."""
    blocks = re.findall(r"```python\n(.*?)```", statement, re.S)
    imports, checks = [], []
    for block in blocks:
        for line in block.splitlines():
            if _IMPORT_RE.match(line.strip()):
                imports.append(line.strip())
            elif line.strip() and not line.strip().startswith("#"):
                checks.append(line.strip())
    if not checks:
        return None
    out = [_TRACER, "_ok = 0"]
    for imp in dict.fromkeys(imports):
        out.append(f"try:\n    {imp}\nexcept Exception as _e:\n    print('IMPORT FAILED:', repr(_e))")
    out.append("if '--trace' in _sys.argv:\n    _sys.settrace(_tracer)")
    for i, c in enumerate(checks):
        out.append(f"try:\n    {c}\n    _ok += 1\nexcept Exception as _e:\n"
                   f"    print('CHECK {i} FAILED:', type(_e).__name__, _e)")
    out.append("_sys.settrace(None)")
    out.append("for (_p, _l), _ in sorted(_SEEN.items(), key=lambda kv: kv[1]):\n"
               "    print(f'TRACE {_p}:{_l}')")
    out.append(f"print('REPRO %d/%d' % (_ok, {len(checks)}))")
    return "\n".join(out) + "\n"


def repro_score(observation: str) -> tuple[int, int] | None:
    m = _REPRO_RE.search(observation)
    return (int(m.group(1)), int(m.group(2))) if m else None


def failed_tests(observation: str) -> int | None:
    """Failures + errors in a `pytest -q` summary tail; None when there is no summary."""
    if re.search(r"\d+ passed|no tests ran", observation) is None and \
            re.search(r"\d+ (failed|error)", observation) is None:
        return None
    return sum(int(n) for n, _ in re.findall(r"(\d+) (failed|errors?)\b", observation))


def _call(name: str, **args) -> dict:
    return chat.make_tool_call(name, args, "call")


def _parse_view(text: str) -> dict[int, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\t(.*)$", line)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


class _Scripted:
    """A policy written as a generator: `obs = yield [tool calls]` (obs: their outputs)."""

    name = "scripted"

    def reset(self, instance: dict) -> None:
        self.instance = instance
        self._gen = self._script(instance)
        self._started = False
        self.extra: dict = {}

    def _script(self, instance):   # pragma: no cover - overridden
        raise NotImplementedError
        yield

    def act(self, messages: list[dict]) -> dict:
        obs = []
        for m in reversed(messages):
            if m["role"] == "assistant":
                break
            if m["role"] == "tool":
                obs.append(m["content"])
        obs.reverse()
        try:
            calls = next(self._gen) if not self._started else self._gen.send(obs)
        except StopIteration:
            calls = [_call("finish")]
        self._started = True
        return {"content": "", "tool_calls": calls}

    def count_tokens(self, messages: list[dict]) -> int:
        return sum(len(json.dumps(m)) for m in messages) // 4

    def episode_extra(self) -> dict:
        return dict(self.extra)

    # shared workflow steps ---------------------------------------------------------
    run_visible_tests = True

    def _localise(self, instance):
        """Write + trace the reproduction, view the traced modules. Returns (baseline
        (passed, total), visible failures, {path: {line: text}}, [(path, line)] executed)."""
        script = reproduction_script(instance["problem_statement"])
        if script is None:
            return None
        calls = [_call("str_replace_editor", command="create", path=REPRO, file_text=script),
                 _call("execute_bash", command=TRACE_REPRO)]
        if self.run_visible_tests:
            calls.append(_call("execute_bash", command=RUN_TESTS))
        obs = yield calls
        base = repro_score(obs[1]) or (0, 1)
        visible = failed_tests(obs[2]) if self.run_visible_tests else None
        executed = [(p, int(n)) for p, n in _TRACE_RE.findall(obs[1]) if p.endswith(".py")]
        paths = list(dict.fromkeys(p for p, _ in executed))
        if not paths:
            return base, visible, {}, []
        obs = yield [_call("str_replace_editor", command="view", path=p) for p in paths]
        sources = {p: _parse_view(o) for p, o in zip(paths, obs)}
        return base, visible, sources, executed


def candidate_edits(sources: dict[str, dict[int, str]], executed: Sequence[tuple[str, int]],
                    max_candidates: int) -> list[tuple[str, int, str, str]]:
    """[(path, line, old line, new line)]: inverse-mutation proposals at executed lines, in
    execution order, comparison flips / swaps first within a line."""
    order = {"flip_comparison": 0, "swapped_arguments": 1, "off_by_one": 2, "wrong_default": 3}
    per_line: dict[tuple[str, int], list] = {}
    for path, lines in sources.items():
        text = "".join(lines[i] + "\n" for i in sorted(lines))
        try:
            found = mutations.sites(text, path, kinds=tuple(order))
        except SyntaxError:
            continue
        for m in found:
            if m.lineno != m.end_lineno:
                continue
            new_text = mutations.apply(text, [m])
            new_line = new_text.splitlines()[m.lineno - 1]
            per_line.setdefault((path, m.lineno), []).append((order[m.kind], new_line))
    out, seen = [], set()
    for path, line in executed:
        for _, new_line in sorted(per_line.get((path, line), []), key=lambda t: t[0]):
            key = (path, line, new_line)
            if key not in seen:
                seen.add(key)
                out.append((path, line, sources[path][line], new_line))
    return out[:max_candidates]


def _replace_line_call(path: str, lines: dict[int, str], line: int, new: str) -> dict:
    """A str_replace of `line` whose old_str is unique: the line with as many neighbours as
    needed (the editor insists on exactly one occurrence)."""
    text = "".join(lines[i] + "\n" for i in sorted(lines))
    lo = hi = line
    while True:
        old = "\n".join(lines[i] for i in range(lo, hi + 1))
        if text.count(old + "\n") == 1 or (lo == min(lines) and hi == max(lines)):
            break
        lo, hi = max(min(lines), lo - 1), min(max(lines), hi + 1)
    new_block = "\n".join(new if i == line else lines[i] for i in range(lo, hi + 1))
    return _call("str_replace_editor", command="str_replace", path=path,
                 old_str=old + "\n", new_str=new_block + "\n")


class SearchPolicy(_Scripted):
    """The search baseline (module docstring)."""

    name = "search"

    def __init__(self, max_candidates: int = 40):
        self.max_candidates = max_candidates

    def _script(self, instance):
        loc = yield from self._localise(instance)
        if loc is None:
            return
        (ok, total), visible, sources, executed = loc
        first_path: dict[int, str] = {}       # the path the compact prompt's line N means
        for p, n in executed:
            first_path.setdefault(n, p)
        self.extra = {"prompt": compact_prompt(instance, sources, executed), "edits": []}
        pending = None                       # (path, line, applied line, previous line)
        for path, line, _old, new in candidate_edits(sources, executed, self.max_candidates):
            calls = []
            if pending is not None:          # undo the last rejected candidate
                p, ln, applied, prev = pending
                calls.append(_replace_line_call(p, {**sources[p], ln: applied}, ln, prev))
                pending = None
            old = sources[path][line]
            if old == new:
                continue
            calls += [_replace_line_call(path, sources[path], line, new),
                      _call("execute_bash", command=RUN_REPRO)]
            obs = yield calls
            got = repro_score(obs[-1]) or (0, total)
            if got[0] > ok:
                self.extra["edits"].append({"line": line, "code": new, "path": path,
                                            "repro": f"REPRO {got[0]}/{got[1]}",
                                            "op": op_for(sources[path], line, new),
                                            "first_path": first_path.get(line) == path})
                sources[path] = {**sources[path], line: new}
                ok = got[0]
                if ok == total:
                    obs = yield [_call("execute_bash", command=RUN_TESTS)]
                    now = failed_tests(obs[0])
                    if visible is None or (now is not None and now <= visible):
                        return
            else:
                pending = (path, line, new, old)
        if pending is not None:
            p, ln, applied, prev = pending
            yield [_replace_line_call(p, {**sources[p], ln: applied}, ln, prev)]


# ------------------------------------------------------------------------------ workspace LM

LM_SYSTEM = "Fix the bug: fix(line, op), op in flip inc dec swap; finish()."
OPS = ("flip", "inc", "dec", "swap")


def apply_op(lines: dict[int, str], line: int, op: str) -> str | None:
    """Line `line` of a module (`lines` = {number: text}) after the action `op`, or None
    when the op does not apply there: flip = the first comparison operator of the line
    flipped (< <-> <=, > <-> >=, == <-> !=, in <-> not in), inc / dec = its first integer
    literal +1 / -1, swap = its first call's first two arguments exchanged."""
    if line not in lines or op not in OPS:
        return None
    text = "".join(lines[i] + "\n" for i in range(1, max(lines) + 1) if i in lines) \
        if set(lines) == set(range(1, max(lines) + 1)) else None
    if text is None:
        return None
    try:
        found = mutations.sites(text, "m.py", ("flip_comparison", "swapped_arguments",
                                               "off_by_one", "wrong_default"))
    except SyntaxError:
        return None
    found = sorted((m for m in found if m.lineno == line == m.end_lineno), key=lambda m: m.col)
    pick = None
    for m in found:
        if op == "flip" and m.kind == "flip_comparison" or op == "swap" and m.kind == "swapped_arguments":
            pick = m
        elif op in ("inc", "dec") and m.kind in ("off_by_one", "wrong_default"):
            try:
                old, new = int(m.old), int(m.new)
            except ValueError:
                continue
            if new == old + (1 if op == "inc" else -1):
                pick = m
        if pick is not None:
            break
    if pick is None:
        return None
    return mutations.apply(text, [pick]).splitlines()[line - 1]


def op_for(lines: dict[int, str], line: int, target: str) -> str | None:
    """The first op of `OPS` that turns line `line` into `target` (None: no op does)."""
    for op in OPS:
        if apply_op(lines, line, op) == target:
            return op
    return None


def compact_prompt(instance: dict, sources: dict[str, dict[int, str]],
                   executed: Sequence[tuple[str, int]], max_lines: int = 12) -> str:
    """The workspace LM's observation: the first failing check of the issue and the
    executed repository lines in execution order (`line| code`), at most `max_lines`."""
    st = instance["problem_statement"]
    checks = [ln.strip() for b in re.findall(r"```python\n(.*?)```", st, re.S)
              for ln in b.splitlines() if ln.strip().startswith("assert")]
    shown = []
    for path, line in executed:
        if path in sources and line in sources[path] and (path, line) not in shown:
            shown.append((path, line))
    return format_prompt(checks[0] if checks else st.splitlines()[0],
                         [(line, sources[path][line]) for path, line in shown[:max_lines]])


def format_prompt(check: str, lines: Sequence[tuple[int, str]]) -> str:
    return "\n".join([check] + [f"{n}| {code}" for n, code in lines])


def lm_action_text(name: str, args: dict) -> str:
    return chat.CALL_OPEN + json.dumps({"name": name, "arguments": args}, sort_keys=True) + \
        chat.CALL_CLOSE


def demonstration(prompt: str, edits: Sequence[dict]) -> list[dict]:
    """The compact conversation a `WorkspaceLMPolicy` would have had making `edits`
    ({"line", "op", "repro"}), then finishing (synthetic pre-training data)."""
    msgs = [{"role": "system", "content": LM_SYSTEM}, {"role": "user", "content": prompt}]
    for e in edits:
        msgs.append({"role": "assistant",
                     "content": lm_action_text("fix", {"line": e["line"], "op": e["op"]})})
        msgs.append({"role": "tool", "content": e["repro"]})
    msgs.append({"role": "assistant", "content": lm_action_text("finish", {})})
    return msgs


class WorkspaceLMPolicy(_Scripted):
    """The workspace LM in the fixed workflow (module docstring)."""

    name = "workspace_lm"
    run_visible_tests = False

    def __init__(self, lm, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_edits: int = 4, max_tokens: int = 80, seed: int = 0):
        self.lm, self.temperature, self.top_p = lm, temperature, top_p
        self.max_edits, self.max_tokens, self.seed = max_edits, max_tokens, seed
        self._episode = 0

    def _ask(self, msgs: list[dict]) -> tuple[str, dict | None]:
        self._episode += 1
        r = self.lm.chat(msgs, temperature=self.temperature, top_p=self.top_p,
                         max_tokens=self.max_tokens, seed=self.seed * 100_003 + self._episode)
        text = r.texts[0]
        _, calls = chat.parse_local_tool_calls(text)
        if not calls:
            return text, None
        fn = calls[0]["function"]
        return text, {"name": fn["name"], "arguments": json.loads(fn["arguments"])}

    def _script(self, instance):
        loc = yield from self._localise(instance)
        if loc is None:
            return
        (ok, total), _visible, sources, executed = loc
        lines_by_no = {}
        for path, line in executed:
            lines_by_no.setdefault(line, path)
        msgs = [{"role": "system", "content": LM_SYSTEM},
                {"role": "user", "content": compact_prompt(instance, sources, executed)}]
        self.extra = {"lm_messages": msgs}
        for _ in range(self.max_edits + 1):
            limit = getattr(getattr(self.lm, "cfg", None), "max_len", None)
            if limit is not None and self.lm.count_tokens(
                    chat.render_chat(msgs)) + self.max_tokens > limit:
                self.extra["context_exceeded"] = True      # the LM's own context cap
                return
            text, action = self._ask(msgs)
            msgs.append({"role": "assistant", "content": text})
            if action is None:
                msgs.append({"role": "tool", "content": "invalid: write one tool call"})
                continue
            if action["name"] == "finish":
                return
            if action["name"] != "fix":
                msgs.append({"role": "tool", "content": "invalid: unknown action"})
                continue
            args = action["arguments"]
            line, op = args.get("line"), args.get("op")
            path = lines_by_no.get(line) if isinstance(line, int) else None
            if path is None:
                msgs.append({"role": "tool", "content": "invalid: line not shown"})
                continue
            code = apply_op(sources[path], line, op) if isinstance(op, str) else None
            if code is None:
                msgs.append({"role": "tool", "content": "invalid: op does not apply"})
                continue
            obs = yield [_replace_line_call(path, sources[path], line, code),
                         _call("execute_bash", command=RUN_REPRO)]
            if obs[0].startswith("ERROR"):
                msgs.append({"role": "tool", "content": "invalid: edit failed"})
                continue
            sources[path] = {**sources[path], line: code}
            got = repro_score(obs[-1])
            msgs.append({"role": "tool", "content": f"REPRO {got[0]}/{got[1]}" if got
                         else "REPRO error"})


# ------------------------------------------------------------------------------ chat policy

class ChatPolicy:
    """A `LanguageModel` driving the CodeAct tools directly (module docstring)."""

    def __init__(self, lm, *, temperature: float = 0.0, top_p: float = 1.0,
                 max_tokens: int = 1024, seed: int | None = None, name: str | None = None):
        self.lm, self.temperature, self.top_p = lm, temperature, top_p
        self.max_tokens, self.seed = max_tokens, seed
        self.name = name or f"chat:{getattr(lm, 'name', 'model')}"

    def reset(self, instance: dict) -> None:
        self.turn = 0

    def act(self, messages: list[dict]) -> dict:
        self.turn += 1
        seed = None if self.seed is None else self.seed * 1000 + self.turn
        r = self.lm.chat(messages, tools=agent.TOOLS, temperature=self.temperature,
                         top_p=self.top_p, max_tokens=self.max_tokens, seed=seed)
        c = r.choices[0]
        return {"content": c.text, "tool_calls": c.tool_calls}

    def count_tokens(self, messages: list[dict]) -> int:
        if hasattr(self.lm, "count_tokens"):
            return self.lm.count_tokens(chat.render_chat(messages, tools=agent.TOOLS))
        return sum(len(json.dumps(m)) for m in messages) // 4

    def episode_extra(self) -> dict:
        return {}
