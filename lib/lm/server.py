"""An OpenAI-compatible HTTP server for any `LanguageModel` (stdlib `http.server`).

    server = make_server(LocalLM.from_workdir(w), host="127.0.0.1", port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_port}/v1"

Endpoints: `POST /v1/chat/completions`, `POST /v1/completions`, `GET /v1/models`,
`GET /health`. Request fields: model, messages | prompt, n, temperature, top_p,
max_tokens, stop (str or list), seed, logprobs (+ top_logprobs for chat; an int for
completions), tools. Answers follow OpenAI's shapes (`choices[i].message.content`,
`.tool_calls`, `.logprobs.content[j].{token, logprob, bytes, top_logprobs}`,
`finish_reason`, `usage`).

Errors: a body that is not JSON, a missing/ill-typed field, or a request the model refuses
(unknown special token, prompt longer than the context) is HTTP 400 with
`{"error": {"message", "type": "invalid_request_error"}}`; anything else is HTTP 500.
`native_tools=False` makes the server reject `tools` with HTTP 400 like servers without
tool calling do (the client then falls back to the text format).

Requests are served on threads; the model itself generates one request at a time.
"""
from __future__ import annotations

import json
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lib.lm.client import ChatResult, LanguageModel

_MAX_BODY = 16 * 2 ** 20


class BadRequest(ValueError):
    pass


def _field(body: dict, name: str, kind, default):
    value = body.get(name, default)
    if value is None:
        return default
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise BadRequest(f"field '{name}' = {value!r} must be of type {kind.__name__}")
    return value


def _sampling_kwargs(body: dict) -> dict:
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and (not isinstance(stop, list) or not all(isinstance(s, str) for s in stop)):
        raise BadRequest("field 'stop' must be a string or a list of strings")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise BadRequest("field 'seed' must be an int")
    return dict(n=_field(body, "n", int, 1), temperature=_field(body, "temperature", float, 1.0),
                top_p=_field(body, "top_p", float, 1.0),
                max_tokens=_field(body, "max_tokens", int, 256), stop=stop, seed=seed)


def _chat_json(result: ChatResult, model: str) -> dict:
    choices = []
    for c in result.choices:
        msg: dict[str, Any] = {"role": "assistant", "content": c.text}
        if c.tool_calls:
            msg["tool_calls"] = c.tool_calls
        lp = None
        if c.logprobs is not None:
            lp = {"content": [{"token": t.token, "logprob": t.logprob, "id": t.token_id,
                               "bytes": list(t.token.encode()),
                               "top_logprobs": [{"token": a, "logprob": v,
                                                 "bytes": list(a.encode())} for a, v in t.top]}
                              for t in c.logprobs]}
        choices.append({"index": c.index, "message": msg, "logprobs": lp,
                        "finish_reason": c.finish_reason})
    return {"id": "chatcmpl-" + uuid.uuid4().hex[:16], "object": "chat.completion",
            "created": int(time.time()), "model": model, "choices": choices,
            "usage": {"prompt_tokens": result.prompt_tokens,
                      "completion_tokens": result.completion_tokens,
                      "total_tokens": (result.prompt_tokens or 0) + (result.completion_tokens or 0)}}


def _completion_json(result: ChatResult, model: str) -> dict:
    choices = []
    for c in result.choices:
        lp = None
        if c.logprobs is not None:
            lp = {"tokens": [t.token for t in c.logprobs],
                  "token_logprobs": [t.logprob for t in c.logprobs],
                  "top_logprobs": [dict(t.top) for t in c.logprobs]}
        choices.append({"index": c.index, "text": c.text, "logprobs": lp,
                        "finish_reason": c.finish_reason})
    return {"id": "cmpl-" + uuid.uuid4().hex[:16], "object": "text_completion",
            "created": int(time.time()), "model": model, "choices": choices,
            "usage": {"prompt_tokens": result.prompt_tokens,
                      "completion_tokens": result.completion_tokens}}


def handle(lm: LanguageModel, path: str, body: Any, native_tools: bool = True) -> dict:
    """The JSON answer of one POST (raises BadRequest / ValueError for HTTP 400)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    kw = _sampling_kwargs(body)
    model = body.get("model") or lm.name
    if path == "/v1/chat/completions":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("field 'messages' must be a non-empty list")
        tools = body.get("tools")
        if tools is not None and not native_tools:
            raise BadRequest("this server does not support tools (function calling)")
        top = _field(body, "top_logprobs", int, 0)
        want = bool(body.get("logprobs")) or top > 0
        result = lm.chat(messages, logprobs=want, top_logprobs=top, tools=tools, **kw)
        return _chat_json(result, model)
    if path == "/v1/completions":
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise BadRequest("field 'prompt' must be a string")
        lp = body.get("logprobs")
        if lp is not None and (not isinstance(lp, int) or isinstance(lp, bool)):
            raise BadRequest("field 'logprobs' must be an int (number of top log-probs)")
        result = lm.complete(prompt, logprobs=lp is not None, top_logprobs=lp or 0, **kw)
        return _completion_json(result, model)
    raise KeyError(path)


def make_server(lm: LanguageModel, host: str = "127.0.0.1", port: int = 0,
                native_tools: bool = True, log=None) -> ThreadingHTTPServer:
    """A `ThreadingHTTPServer` serving `lm` (call `serve_forever`; port 0 picks a free one)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):      # quiet unless a logger is given
            if log:
                log(fmt % args)

        def _send(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            self._send(status, {"error": {"message": message, "type": kind}})

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list",
                                 "data": [{"id": lm.name, "object": "model"}]})
            else:
                self._error(404, f"no route GET {self.path}", "not_found")

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY:
                self._error(413, f"body of {length} bytes exceeds {_MAX_BODY}", "invalid_request_error")
                return
            raw = self.rfile.read(length)
            if self.path not in ("/v1/chat/completions", "/v1/completions"):
                self._error(404, f"no route POST {self.path}", "not_found")
                return
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                self._error(400, f"request body is not JSON: {e}", "invalid_request_error")
                return
            try:
                answer = handle(lm, self.path, body, native_tools)
            except (BadRequest, ValueError, TypeError) as e:
                self._error(400, str(e), "invalid_request_error")
                return
            except Exception as e:  # noqa: BLE001  (an internal error must reach the client)
                self._error(500, f"{type(e).__name__}: {e}", "server_error")
                return
            self._send(200, answer)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
