"""A CodeAct-style agent loop (OpenHands CodeActAgent's tools) over a materialised instance.

Tools (OpenAI function specs in `TOOLS`; a served model without native tool calling gets
them as `<function=...>` text through lib/lm/client.py):

    execute_bash(command)                 a shell command in the repository, sandboxed
    str_replace_editor(command, path, ...) view | create | str_replace | insert
    finish()                              end the episode

The loop (`run_episode`):
    messages = [system, user(problem statement)]
    repeat: message = policy.act(messages); execute its tool calls in order; append the
            tool results; stop at `finish`, or when
              turns == max_turns                          -> exit "max_turns"
              the same tool calls `loop_window` turns in a row -> exit "stuck_in_loop"
              policy.count_tokens(messages) > max_context -> exit "context_exceeded"
              the policy raises                            -> exit "error"
    prediction = `git diff` of the workspace against base_commit (new files included).

Bash runs through `lib.sandbox.run_in_copy` (limits, no network) on a copy of the
workspace (its .git included, so git works inside); the copy's work-tree files then
replace the workspace's, so edits made by commands persist across turns. The copy's .git
never comes back (git state made inside -- index, commits, config, hooks -- lasts one
command; the host's git only ever reads the workspace's own .git), nor does any nested
.git, FIFO, socket or device; links come back as links. A read-only command's output is
cached by (tree hash, command).

The editor works on the host through `treefs`: it refuses links (anywhere on the path),
FIFOs and devices, paths outside the repository or inside .git, and files over
`MAX_EDIT_BYTES`.
"""
from __future__ import annotations

import dataclasses
import json
import os
import posixpath
import shutil
import time
from collections.abc import Sequence
from typing import Protocol

from lib import sandbox
from lib.swe_gym import runtime, treefs

MAX_EDIT_BYTES = 1 << 20      # the editor reads and writes files up to this size

TOOLS = [
    {"type": "function", "function": {
        "name": "execute_bash", "description": "Run a bash command in the repository root.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "the command"}},
            "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "str_replace_editor",
        "description": "View, create and edit files. view: a file with line numbers (or a "
                       "directory); create: a new file; str_replace: replace old_str, which "
                       "must occur exactly once; insert: new_str after line insert_line.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"],
                        "description": "view | create | str_replace | insert"},
            "path": {"type": "string", "description": "path relative to the repository"},
            "file_text": {"type": "string", "description": "create: the content"},
            "old_str": {"type": "string", "description": "str_replace: text to replace"},
            "new_str": {"type": "string", "description": "str_replace / insert: new text"},
            "insert_line": {"type": "integer", "description": "insert: after this line"},
            "view_range": {"type": "array", "description": "view: [first, last] lines"}},
            "required": ["command", "path"]}}},
    {"type": "function", "function": {
        "name": "finish", "description": "Finish: the issue is resolved.",
        "parameters": {"type": "object", "properties": {}}}},
]

SYSTEM_PROMPT = ("You are a software engineer fixing an issue in a Python repository (the "
                 "current directory). Reproduce the problem, edit the source to fix it, check "
                 "the fix, and call finish. Do not modify the tests.")


@dataclasses.dataclass(frozen=True)
class Caps:
    max_turns: int = 30
    max_context: int = 32_000     # tokens, counted by the policy
    loop_window: int = 3          # identical actions in a row that count as stuck
    max_observation_chars: int = 4000
    bash_limits: sandbox.Limits = sandbox.Limits(wall_s=10.0, cpu_s=10, memory_mb=1024,
                                                 file_mb=16, max_output_bytes=8000)


class Policy(Protocol):
    name: str

    def reset(self, instance: dict) -> None: ...
    def act(self, messages: list[dict]) -> dict: ...          # an assistant message
    def count_tokens(self, messages: list[dict]) -> int: ...


@dataclasses.dataclass
class Trajectory:
    instance_id: str
    policy: str
    messages: list[dict]
    patch: str
    exit_reason: str
    turns: int
    wall_s: float
    extra: dict = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class ToolError(Exception):
    pass


class AgentEnv:
    """Tool execution on a workspace checkout (module docstring)."""

    def __init__(self, ws: runtime.Workspace, caps: Caps, bash_cache: dict | None = None):
        self.ws, self.caps = ws, caps
        self.bash_cache = bash_cache if bash_cache is not None else {}

    # ------------------------------------------------------------------ paths
    def _resolve(self, path: str) -> str:
        """The normalised path relative to the repository ("" for its root)."""
        if not isinstance(path, str) or not path:
            raise ToolError("a path is required")
        rel = path[len("/workspace/"):] if path.startswith("/workspace/") else path
        rel = "" if rel in ("/workspace", ".") else posixpath.normpath(rel)
        parts = rel.split("/")
        if rel.startswith("/") or parts[0] == ".." or ".git" in parts or "\0" in rel:
            raise ToolError(f"path {path!r} is outside the repository")
        return "" if rel == "." else rel

    # ------------------------------------------------------------------ tools
    def bash(self, command: str) -> str:
        if not isinstance(command, str) or not command.strip():
            raise ToolError("execute_bash needs a non-empty command")
        before = runtime.tree_hash(self.ws.path)
        key = (before, command)
        if key in self.bash_cache:
            return self.bash_cache[key]
        res = sandbox.run_in_copy(self.ws.path, ["bash", "-c", command],
                                  limits=self.caps.bash_limits, keep=True)
        left_out: list[str] = []
        try:
            work = os.path.join(res.root, "work")
            cacheable = runtime.tree_hash(work) == before
            if not cacheable:      # the command changed files: they replace the workspace's
                left_out = treefs.copy_tree(work, self.ws.path, skip=(".git",))
        finally:
            shutil.rmtree(res.root, ignore_errors=True)
        out = (res.stdout + res.stderr).rstrip()
        tail = "[command timed out]" if res.timed_out else f"[exit code {res.returncode}]"
        if left_out:
            tail += ("\n[not kept (FIFO, socket, device or unreadable): "
                     f"{', '.join(left_out[:20])}]")
        text = (out + "\n" if out else "") + tail
        if cacheable and not res.timed_out:
            self.bash_cache[key] = text
        return text

    def editor(self, command: str, path: str, file_text: str | None = None,
               old_str: str | None = None, new_str: str | None = None,
               insert_line: int | None = None, view_range: Sequence[int] | None = None) -> str:
        rel = self._resolve(path)
        try:
            return self._edit(command, rel, path, file_text, old_str, new_str, insert_line,
                              view_range)
        except treefs.TreeError as e:
            raise ToolError(str(e)) from None

    def _edit(self, command, rel, path, file_text, old_str, new_str, insert_line, view_range):
        root = self.ws.path
        if command == "view":
            if not rel or treefs.lkind(root, rel) == "directory":
                return self._listing(rel)
            lines = self._read(rel, edit=False).splitlines()
            lo, hi = 1, len(lines)
            if view_range:
                lo, hi = int(view_range[0]), int(view_range[1])
                hi = len(lines) if hi == -1 else hi
                if not 1 <= lo <= max(hi, 1) or hi > len(lines):
                    raise ToolError(f"view_range {list(view_range)} is outside 1..{len(lines)}")
            return "\n".join(f"{i:6d}\t{lines[i - 1]}" for i in range(lo, hi + 1))
        if not rel:
            raise ToolError(f"{command} needs a file path, not the repository root")
        if command == "create":
            if file_text is None:
                raise ToolError("create needs file_text")
            kind = treefs.lkind(root, rel)
            if kind == "symbolic link":
                raise ToolError(f"{path} is a symbolic link; the editor does not follow links")
            if kind is not None:
                raise ToolError(f"{path} already exists; use str_replace to edit it")
            self._write(rel, file_text, create=True)
            return f"created {path}"
        if command == "str_replace":
            if not old_str:
                raise ToolError("str_replace needs a non-empty old_str")
            text = self._read(rel)
            n = text.count(old_str)
            if n != 1:
                raise ToolError(f"old_str occurs {n} times in {path}; it must occur exactly once")
            self._write(rel, text.replace(old_str, new_str or ""))
            return f"edited {path}"
        if command == "insert":
            if new_str is None or insert_line is None:
                raise ToolError("insert needs insert_line and new_str")
            lines = self._read(rel).splitlines(keepends=True)
            k = int(insert_line)
            if not 0 <= k <= len(lines):
                raise ToolError(f"insert_line {k} is outside 0..{len(lines)}")
            add = new_str if new_str.endswith("\n") else new_str + "\n"
            if k and not lines[k - 1].endswith("\n"):
                lines[k - 1] += "\n"
            lines.insert(k, add)
            self._write(rel, "".join(lines))
            return f"inserted into {path} after line {k}"
        raise ToolError(f"unknown editor command {command!r}; expected view, create, "
                        "str_replace or insert")

    def _listing(self, rel: str) -> str:
        """Files and links under the directory rel (hidden directories and __pycache__
        left out): a directory's own entries first, then its subdirectories'."""
        base = os.path.join(self.ws.path, rel) if rel else self.ws.path
        items = []
        for sub, kind in treefs.walk(base, skip=(".git",)):
            parts = sub.split("/")
            if kind == "dir" or any(d.startswith((".", "__pycache__")) for d in parts[:-1]):
                continue
            key = [(1, d) for d in parts[:-1]] + [(0, parts[-1])]
            items.append((key, f"{rel}/{sub}" if rel else sub))
        return "\n".join(p for _, p in sorted(items))

    def _read(self, rel: str, edit: bool = True) -> str:
        """The file's text; one that is not UTF-8 is shown with replacement characters but
        not edited (rewriting it would change bytes the edit did not touch)."""
        data = treefs.read_bytes(self.ws.path, rel, MAX_EDIT_BYTES)
        try:
            return data.decode("utf-8", errors="strict" if edit else "replace")
        except UnicodeDecodeError:
            raise ToolError(f"{rel} is not UTF-8 text; edit it with execute_bash") from None

    def _write(self, rel: str, text: str, create: bool = False) -> None:
        if len(text.encode()) > MAX_EDIT_BYTES:
            raise ToolError(f"the new content of {rel} is over the {MAX_EDIT_BYTES}-byte cap")
        treefs.write_text(self.ws.path, rel, text, create=create)

    def execute(self, call: dict) -> tuple[str, bool]:
        """(observation, finished) of one OpenAI-style tool call; errors become text."""
        fn = call.get("function", {})
        name = fn.get("name")
        try:
            args = fn.get("arguments") or "{}"
            args = json.loads(args) if isinstance(args, str) else dict(args)
            if not isinstance(args, dict):
                raise ToolError("arguments must be a JSON object")
            if name == "finish":
                return "finished", True
            if name == "execute_bash":
                return self.bash(args.get("command")), False
            if name == "str_replace_editor":
                known = {"command", "path", "file_text", "old_str", "new_str", "insert_line",
                         "view_range"}
                extra = set(args) - known
                if extra:
                    raise ToolError(f"unknown argument(s) {sorted(extra)}")
                return self.editor(**args), False
            raise ToolError(f"unknown tool {name!r}; use execute_bash, str_replace_editor or finish")
        except (ToolError, json.JSONDecodeError, TypeError, ValueError) as e:
            return f"ERROR: {e}", False


def _action_key(message: dict) -> str:
    calls = [(c["function"]["name"], c["function"].get("arguments")) for c in
             message.get("tool_calls") or []]
    return json.dumps([message.get("content") or "", calls], sort_keys=True)


class _LazyEnv:
    """An `AgentEnv` checked out only when first needed, then brought to the current state
    by re-executing the tool calls made so far (`replay`)."""

    def __init__(self, instance: dict, store: str, caps: Caps, bash_cache: dict | None):
        self.instance, self.store, self.caps, self.bash_cache = instance, store, caps, bash_cache
        self.ws: runtime.Workspace | None = None
        self.env: AgentEnv | None = None
        self.replay: list[dict] = []

    def get(self) -> AgentEnv:
        if self.env is None:
            self.ws = runtime.Workspace.checkout(self.store, self.instance["repo"],
                                                 self.instance["base_commit"])
            self.env = AgentEnv(self.ws, self.caps, self.bash_cache)
            for call in self.replay:
                self.env.execute(call)
        return self.env

    def close(self) -> None:
        if self.ws is not None:
            self.ws.close()


def run_episode(instance: dict, policy: Policy, store: str, caps: Caps = Caps(),
                bash_cache: dict | None = None, memo: dict | None = None) -> Trajectory:
    """One rollout of `policy` on `instance` (module docstring).

    `memo` (optional, shared across rollouts): tool observations keyed by (instance,
    the action history so far) and final patches keyed by (instance, all actions). An
    episode whose actions repeat an earlier episode's takes the observations from it and
    checks a workspace out only at its first new action (replaying the earlier calls).
    Valid only when the tools' results are a function of the action history -- true of
    the scripted workflows here (editor edits, reproduction and test runs); a command
    whose output varies (time, randomness) must not be memoised."""
    t0 = time.perf_counter()
    policy.reset(instance)
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": instance["problem_statement"]}]
    exit_reason, turns, recent = "max_turns", 0, []
    lazy = _LazyEnv(instance, store, caps, bash_cache)
    history: tuple = (instance["instance_id"], instance["base_commit"])
    try:
        if memo is None:
            lazy.get()
        while turns < caps.max_turns:
            if policy.count_tokens(messages) > caps.max_context:
                exit_reason = "context_exceeded"
                break
            try:
                msg = policy.act(messages)
            except Exception as e:   # noqa: BLE001 -- an LM/server failure ends the episode
                exit_reason = f"error: {type(e).__name__}: {str(e)[:200]}"
                break
            turns += 1
            msg = {"role": "assistant", "content": msg.get("content") or "",
                   "tool_calls": list(msg.get("tool_calls") or [])}
            messages.append(msg)
            recent = (recent + [_action_key(msg)])[-caps.loop_window:]
            history = history + (_action_key(msg),)
            finished = False
            if not msg["tool_calls"]:
                messages.append({"role": "user", "content": "No tool was called. Use a tool, "
                                 "or call finish when the issue is resolved."})
            results = memo.get(history) if memo is not None else None
            if results is None:
                results = [lazy.get().execute(call) for call in msg["tool_calls"]]
                if memo is not None:
                    memo[history] = results
            for i, (call, (obs, done)) in enumerate(zip(msg["tool_calls"], results)):
                call.setdefault("id", f"call_{turns}_{i}")
                lazy.replay.append(call)
                if len(obs) > caps.max_observation_chars:
                    half = caps.max_observation_chars // 2
                    obs = obs[:half] + "\n[... truncated ...]\n" + obs[-half:]
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": obs})
                finished = finished or done
            if finished:
                exit_reason = "finish"
                break
            if len(recent) == caps.loop_window and len(set(recent)) == 1:
                exit_reason = "stuck_in_loop"
                break
        key = history + ("patch",)
        patch = memo.get(key) if memo is not None else None
        if patch is None:
            patch = lazy.get().ws.diff()
            if memo is not None:
                memo[key] = patch
    finally:
        lazy.close()
    extra = dict(getattr(policy, "episode_extra", lambda: {})())
    return Trajectory(instance["instance_id"], policy.name, messages, patch, exit_reason, turns,
                      time.perf_counter() - t0, extra)
