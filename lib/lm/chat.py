"""Chat messages, tool calls and their text forms (shared by the local model, server and client).

A message is an OpenAI-style dict: `{"role": "system"|"user"|"assistant"|"tool",
"content": str, "tool_calls": [...]?, "tool_call_id": str?}`; a tool call is
`{"id", "type": "function", "function": {"name", "arguments": JSON string}}`.

Two text forms of a tool call:

* local chat template (the workspace's own models): `<|tool_call|>{"name": ..., "arguments":
  {...}}<|/tool_call|>` inside the assistant turn.
* text fallback for servers without native tool calling (the format OpenHands' function-call
  converter uses, which SWE-Gym's trajectories are rendered in):
  `<function=NAME>\\n<parameter=KEY>VALUE</parameter>\\n</function>`; the tool list is put in
  the system message by `tools_system_text`.

The local chat template (`render_chat`) is

    <|system|>...<|end|><|user|>...<|end|><|assistant|>...<|end|><|tool|>...<|end|>

and a generation prompt ends with `<|assistant|>`; the model ends its turn with `<|end|>`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

ROLES = ("system", "user", "assistant", "tool")
ROLE_TOKEN = {r: f"<|{r}|>" for r in ROLES}
END = "<|end|>"
CALL_OPEN, CALL_CLOSE = "<|tool_call|>", "<|/tool_call|>"


def check_messages(messages: Any) -> list[dict]:
    """ValueError naming the first bad message (role, content type, tool-call shape)."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise ValueError(f"message {i} has role {m.get('role') if isinstance(m, dict) else m!r};"
                             f" expected one of {list(ROLES)}")
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError(f"message {i} content must be a string or null, got "
                             f"{type(content).__name__}")
        if content is None and not m.get("tool_calls"):
            raise ValueError(f"message {i} has neither content nor tool_calls")
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise ValueError(f"message {i} has a malformed tool call {call!r}")
    return list(messages)


def make_tool_call(name: str, arguments: dict, call_id: str) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, sort_keys=True)}}


def _call_json(call: dict) -> str:
    fn = call["function"]
    args = fn.get("arguments") or "{}"
    args = json.loads(args) if isinstance(args, str) else args
    return json.dumps({"name": fn["name"], "arguments": args}, sort_keys=True)


def tools_system_text_local(tools: Sequence[dict]) -> str:
    """The tool list as the local template states it in the system turn."""
    specs = [t["function"] if "function" in t else t for t in tools]
    return ("You can call these tools. To call one, write " + CALL_OPEN +
            '{"name": ..., "arguments": {...}}' + CALL_CLOSE + ".\nTools: " +
            json.dumps(specs, sort_keys=True))


def render_chat(messages: Sequence[dict], *, add_generation_prompt: bool = True,
                tools: Sequence[dict] | None = None) -> str:
    """Messages -> the local template's text (special tokens written as `<|name|>`)."""
    messages = check_messages(messages)
    parts = []
    if tools:
        parts.append(ROLE_TOKEN["system"] + tools_system_text_local(tools) + END)
    for m in messages:
        body = m.get("content") or ""
        for call in m.get("tool_calls") or []:
            body += CALL_OPEN + _call_json(call) + CALL_CLOSE
        parts.append(ROLE_TOKEN[m["role"]] + body + END)
    if add_generation_prompt:
        parts.append(ROLE_TOKEN["assistant"])
    return "".join(parts)


def render_chat_segments(messages: Sequence[dict],
                         tools: Sequence[dict] | None = None) -> list[tuple[str, bool]]:
    """[(text, is_assistant_output)]: the assistant turns' bodies and their `<|end|>` are
    the parts a fine-tuned model must produce (loss on), everything else is prompt.
    Concatenated, the texts equal `render_chat(messages, tools=tools,
    add_generation_prompt=False)`."""
    messages = check_messages(messages)
    out = []
    if tools:
        out.append((ROLE_TOKEN["system"] + tools_system_text_local(tools) + END, False))
    for m in messages:
        body = m.get("content") or ""
        for call in m.get("tool_calls") or []:
            body += CALL_OPEN + _call_json(call) + CALL_CLOSE
        out.append((ROLE_TOKEN[m["role"]], False))
        out.append((body + END, m["role"] == "assistant"))
    return out


_LOCAL_CALL_RE = re.compile(re.escape(CALL_OPEN) + r"(.*?)" + re.escape(CALL_CLOSE), re.DOTALL)


def parse_local_tool_calls(text: str, id_prefix: str = "call") -> tuple[str, list[dict]]:
    """(content without the calls, tool calls) from a local-template assistant reply.

    A `<|tool_call|>` block whose body is not `{"name": str, "arguments": dict}` JSON is
    kept in the content (not dropped), so a caller sees what the model wrote.
    """
    calls, kept, pos = [], [], 0
    for m in _LOCAL_CALL_RE.finditer(text):
        try:
            obj = json.loads(m.group(1))
            ok = isinstance(obj, dict) and isinstance(obj.get("name"), str) and isinstance(
                obj.get("arguments", {}), dict)
        except json.JSONDecodeError:
            ok = False
        if not ok:
            continue
        kept.append(text[pos:m.start()])
        pos = m.end()
        calls.append(make_tool_call(obj["name"], obj.get("arguments", {}),
                                    f"{id_prefix}_{len(calls)}"))
    kept.append(text[pos:])
    return "".join(kept), calls


# ----------------------------------------------------------------------------- text fallback

def tools_system_text(tools: Sequence[dict]) -> str:
    """System-message text that describes `tools` and the `<function=...>` call format."""
    lines = ["You have access to the following functions. To call one, reply with",
             "<function=NAME>", "<parameter=KEY>VALUE</parameter>", "</function>", ""]
    for t in tools:
        fn = t["function"] if "function" in t else t
        params = (fn.get("parameters") or {}).get("properties", {})
        lines.append(f"---- {fn['name']}: {fn.get('description', '')}")
        for k, spec in params.items():
            lines.append(f"  ({spec.get('type', 'string')}) {k}: {spec.get('description', '')}")
    return "\n".join(lines)


_FN_RE = re.compile(r"<function=([^>\s]+)>(.*?)</function>", re.DOTALL)
_PARAM_RE = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)


def parse_text_tool_calls(text: str, id_prefix: str = "call") -> tuple[str, list[dict]]:
    """(content before the first call, calls) from `<function=...>` text; values stay strings
    unless they parse as JSON numbers/booleans/objects."""
    calls = []
    for m in _FN_RE.finditer(text):
        args = {}
        for p in _PARAM_RE.finditer(m.group(2)):
            value = p.group(2).strip("\n")
            try:
                parsed = json.loads(value)
                value = parsed if not isinstance(parsed, str) else value
            except json.JSONDecodeError:
                pass
            args[p.group(1)] = value
        calls.append(make_tool_call(m.group(1), args, f"{id_prefix}_{len(calls)}"))
    first = _FN_RE.search(text)
    content = text[:first.start()] if first else text
    return content.rstrip(), calls


def text_tool_call(name: str, arguments: dict) -> str:
    """The `<function=...>` text of one call (inverse of `parse_text_tool_calls`)."""
    body = "".join(f"<parameter={k}>{v if isinstance(v, str) else json.dumps(v)}</parameter>\n"
                   for k, v in arguments.items())
    return f"<function={name}>\n{body}</function>"


def messages_for_text_tools(messages: Sequence[dict], tools: Sequence[dict]) -> list[dict]:
    """Rewrite a conversation for a server without tool support: the tool list joins the
    system message, earlier assistant tool calls become `<function=...>` text, and tool
    results become user turns (`EXECUTION RESULT of [name]: ...`)."""
    out: list[dict] = []
    head = tools_system_text(tools)
    if messages and messages[0]["role"] == "system":
        out.append({"role": "system", "content": (messages[0].get("content") or "") + "\n\n" + head})
        rest = messages[1:]
    else:
        out.append({"role": "system", "content": head})
        rest = messages
    names = {}
    for m in rest:
        if m["role"] == "assistant" and m.get("tool_calls"):
            text = m.get("content") or ""
            for c in m["tool_calls"]:
                names[c.get("id")] = c["function"]["name"]
                args = c["function"].get("arguments") or "{}"
                args = json.loads(args) if isinstance(args, str) else args
                text += ("\n" if text else "") + text_tool_call(c["function"]["name"], args)
            out.append({"role": "assistant", "content": text})
        elif m["role"] == "tool":
            name = names.get(m.get("tool_call_id"), "tool")
            out.append({"role": "user", "content": f"EXECUTION RESULT of [{name}]:\n{m['content']}"})
        else:
            out.append({"role": m["role"], "content": m.get("content") or ""})
    return out
