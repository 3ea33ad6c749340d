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

Errors are `{"error": {"message", "type", "param", "code"}}` (OpenAI's shape):
* 400 `invalid_request_error`: a body that is not JSON, a missing or ill-typed field, a
  sampling parameter out of range (`param` names it: temperature in [0, 2] and finite,
  top_p in (0, 1], n in [1, 128], max_tokens in [1, 65536], seed a 64-bit signed int (what
  `jax.random.key` takes), top_logprobs / completion logprobs in [0, 20], chat logprobs a
  bool), or a request the model refuses (unknown special token, prompt longer than the
  context); also a Content-Length that is not a plain non-negative integer;
* 401 `invalid_api_key` when the server has an `api_key` and the request lacks
  `Authorization: Bearer <key>` (every `/v1/...` route; `/health` stays open);
* 404 `model_not_found` for a `model` the server does not serve (`model_names`; a request
  without `model` gets the first), `not_found` for an unknown route;
* 411 for a POST without Content-Length (chunked bodies are not read), 413 for a body over
  16 MiB (refused from the header, nothing of it is read);
* 500 `server_error` for anything else; 503 when the connection queue is full.
`native_tools=False` makes the server reject `tools` with HTTP 400 like servers without
tool calling do (the client then falls back to the text format).

Connections: the listen backlog is `request_queue_size` (1024); accepted connections wait
in a queue of at most `max_pending` and are served by at most `max_workers` daemon threads
(a connection beyond the queue gets 503 and is closed). Each request (line, headers and
body) must arrive within `read_timeout_s` of the server starting to wait for it, however
slowly it trickles in; otherwise the connection is dropped. That also bounds an idle
keep-alive connection. The model itself generates one request at a time (its own lock).
"""
from __future__ import annotations

import hmac
import json
import math
import queue
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from lib.lm.client import ChatResult, LanguageModel

MAX_BODY = 16 * 2 ** 20
MAX_N = 128                            # OpenAI's limit on `n`
MAX_TOKENS = 65536                     # the model refuses more than its context anyway
MAX_TOP_LOGPROBS = 20                  # OpenAI's limit on `top_logprobs`
MAX_TEMPERATURE = 2.0                  # OpenAI's range is [0, 2]
SEED_RANGE = (-2 ** 63, 2 ** 63 - 1)   # jax.random.key takes a C long (OverflowError beyond)
_DIGITS = re.compile(rb"[0-9]+")
_DRAIN_MAX = 2 ** 16                   # an unwanted body up to this size is read, not reset


class RequestError(ValueError):
    """A request the server refuses: HTTP `status`, OpenAI error `kind`/`code`/`param`."""
    status, kind, code = 400, "invalid_request_error", None

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


class BadRequest(RequestError):
    pass


class ModelNotFound(RequestError):
    status, code = 404, "model_not_found"


def _int_field(body: dict, name: str, default: int | None, lo: int, hi: int) -> int | None:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadRequest(f"field '{name}' = {value!r} must be an integer", name)
    if not lo <= value <= hi:
        raise BadRequest(f"field '{name}' = {value} is out of range [{lo}, {hi}]", name)
    return value


def _float_field(body: dict, name: str, default: float, lo: float, hi: float,
                 open_lo: bool = False) -> float:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise BadRequest(f"field '{name}' = {value!r} must be a number", name)
    try:
        value = float(value)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise BadRequest(f"field '{name}' = {value} must be a finite number", name)
    if not (lo < value if open_lo else lo <= value) or value > hi:
        raise BadRequest(f"field '{name}' = {value} is out of range "
                         f"{'(' if open_lo else '['}{lo}, {hi}]", name)
    return value


def _sampling_kwargs(body: dict) -> dict:
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and (not isinstance(stop, list) or not all(isinstance(s, str) for s in stop)):
        raise BadRequest("field 'stop' must be a string or a list of strings", "stop")
    return dict(n=_int_field(body, "n", 1, 1, MAX_N),
                temperature=_float_field(body, "temperature", 1.0, 0.0, MAX_TEMPERATURE),
                top_p=_float_field(body, "top_p", 1.0, 0.0, 1.0, open_lo=True),
                max_tokens=_int_field(body, "max_tokens", 256, 1, MAX_TOKENS), stop=stop,
                seed=_int_field(body, "seed", None, *SEED_RANGE))


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


def handle(lm: LanguageModel, path: str, body: Any, native_tools: bool = True,
           model_names: Sequence[str] | None = None) -> dict:
    """The JSON answer of one POST. Raises `RequestError` (its `status`: 400, or 404 for a
    model not in `model_names`, default `[lm.name]`) or the model's ValueError (400)."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    names = list(model_names) if model_names else [lm.name]
    model = body.get("model")
    if model is None:
        model = names[0]
    elif not isinstance(model, str):
        raise BadRequest(f"field 'model' = {model!r} must be a string", "model")
    elif model not in names:
        raise ModelNotFound(f"The model '{model}' does not exist; this server serves "
                            f"{', '.join(names)}", "model")
    kw = _sampling_kwargs(body)
    if path == "/v1/chat/completions":
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("field 'messages' must be a non-empty list", "messages")
        tools = body.get("tools")
        if tools is not None and not native_tools:
            raise BadRequest("this server does not support tools (function calling)", "tools")
        top = _int_field(body, "top_logprobs", 0, 0, MAX_TOP_LOGPROBS)
        want = body.get("logprobs", False)
        if want is None:
            want = False
        if not isinstance(want, bool):
            raise BadRequest(f"field 'logprobs' = {want!r} must be a boolean", "logprobs")
        result = lm.chat(messages, logprobs=want or top > 0, top_logprobs=top, tools=tools, **kw)
        return _chat_json(result, model)
    if path == "/v1/completions":
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise BadRequest("field 'prompt' must be a string", "prompt")
        lp = _int_field(body, "logprobs", None, 0, MAX_TOP_LOGPROBS)
        result = lm.complete(prompt, logprobs=lp is not None, top_logprobs=lp or 0, **kw)
        return _completion_json(result, model)
    raise KeyError(path)


class _DeadlineReader:
    """The request side of a connection, read like a buffered file (`readline`, `read`), but
    every call raises TimeoutError once `deadline` (time.monotonic()) has passed, however
    slowly the bytes trickle in (a plain socket timeout restarts with every byte)."""

    def __init__(self, sock: socket.socket):
        self._sock, self._buf, self.deadline = sock, bytearray(), math.inf

    def _fill(self) -> bool:
        """Receive more bytes; False at end of stream."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request did not arrive within the read timeout")
        self._sock.settimeout(remaining if remaining < math.inf else None)
        chunk = self._sock.recv(65536)
        self._buf += chunk
        return bool(chunk)

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                return self._take(end + 1 if limit < 0 else min(end + 1, limit))
            if 0 <= limit <= len(self._buf) or not self._fill():
                return self._take(len(self._buf) if limit < 0 else limit)

    def read(self, n: int) -> bytes:
        while len(self._buf) < n and self._fill():
            pass
        return self._take(n)

    def close(self) -> None:
        self._buf.clear()


class PooledHTTPServer(HTTPServer):
    """An `HTTPServer` whose connections are served by at most `max_workers` daemon threads
    (started as needed); accepted connections wait in a queue of at most `max_pending`, and
    one beyond it is answered 503 and closed. The kernel's listen backlog is
    `request_queue_size` (capped by net.core.somaxconn)."""

    request_queue_size = 1024

    def __init__(self, address, handler, max_workers: int = 64, max_pending: int = 1024):
        if max_workers < 1 or max_pending < 1:
            raise ValueError(f"max_workers = {max_workers} and max_pending = {max_pending} "
                             "must be >= 1")
        self.max_workers = max_workers
        self._queue: queue.Queue = queue.Queue(max_pending)
        self._lock = threading.Lock()
        self._workers = self._idle = 0
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        try:
            self._queue.put_nowait((request, client_address))
        except queue.Full:
            try:
                request.settimeout(1.0)
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                b"Connection: close\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._lock:
            if self._queue.qsize() > self._idle and self._workers < self.max_workers:
                self._workers += 1
                threading.Thread(target=self._work, daemon=True,
                                 name=f"lm-server-{self._workers}").start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            item = self._queue.get()
            with self._lock:
                self._idle -= 1
            if item is None:
                return
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:  # noqa: BLE001  (like socketserver: report, keep serving)
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up or stalls is not a server error: no traceback for it."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)

    def shutdown_request(self, request) -> None:
        """Close a connection, first discarding what the client already sent and nobody
        read (a body refused from its headers): closing over unread bytes sends a reset,
        which can destroy the error answer before the client reads it."""
        try:
            request.shutdown(socket.SHUT_WR)
            request.setblocking(False)
            for _ in range(16):                   # at most 1 MiB, never waiting
                if not request.recv(65536):
                    break
        except OSError:                           # BlockingIOError: nothing more is there
            pass
        self.close_request(request)

    def server_close(self) -> None:
        super().server_close()
        while True:                     # close connections nobody has started on
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in range(self._workers):  # workers finish their connection, then stop
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break


def make_server(lm: LanguageModel, host: str = "127.0.0.1", port: int = 0,
                native_tools: bool = True, log=None, *, model_names: Sequence[str] | None = None,
                api_key: str | None = None, read_timeout_s: float = 30.0,
                max_workers: int = 64, max_pending: int = 1024) -> PooledHTTPServer:
    """A `PooledHTTPServer` serving `lm` (call `serve_forever`; port 0 picks a free one).

    `model_names`: the names a request's `model` may take (default `[lm.name]`; the first
    is also the answer to a request without `model`). `api_key`: when set, `/v1/...`
    requests need `Authorization: Bearer <api_key>`. `read_timeout_s`: a request (line,
    headers and body) that has not fully arrived this long after the server started
    waiting for it is dropped. See the module docstring for the error answers."""
    names = list(model_names) if model_names else [lm.name]
    if not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"model_names = {names!r} must be non-empty strings")
    if api_key is not None and (not isinstance(api_key, str) or not api_key):
        raise ValueError("api_key must be a non-empty string (or None for no authentication)")
    if not read_timeout_s > 0:
        raise ValueError(f"read_timeout_s = {read_timeout_s} must be > 0")
    expected = api_key.encode() if api_key else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            super().setup()
            self.rfile.close()          # the buffered reader is replaced by a deadline reader
            self.rfile = _DeadlineReader(self.connection)

        def handle_one_request(self):
            self.rfile.deadline = time.monotonic() + read_timeout_s
            super().handle_one_request()

        def log_message(self, fmt, *args):      # quiet unless a logger is given
            if log:
                log(fmt % args)

        def _send(self, status: int, obj: dict, close: bool = False,
                  headers: Sequence[tuple[str, str]] = ()) -> None:
            data = json.dumps(obj).encode()
            self.connection.settimeout(read_timeout_s)    # a client that never reads
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers:
                self.send_header(k, v)
            if close:                                     # the body was not read
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str, code: str | None = None,
                   param: str | None = None, close: bool = False, headers=()) -> None:
            self._send(status, {"error": {"message": message, "type": kind, "param": param,
                                          "code": code}}, close=close, headers=headers)

        def _authorized(self) -> bool:
            """True when no key is set or the request carries it; else answers 401."""
            if expected is None or not self.path.startswith("/v1/"):
                return True
            scheme, _, token = (self.headers.get("Authorization") or "").strip().partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(),
                                                                  expected):
                return True
            self._drain()
            self._error(401, "missing or incorrect API key: send 'Authorization: Bearer <key>'",
                        "invalid_request_error", "invalid_api_key", close=True,
                        headers=[("WWW-Authenticate", "Bearer")])
            return False

        def do_GET(self):
            if self.path in ("/health", "/v1/health"):
                if self._authorized():
                    self._send(200, {"status": "ok"})
            elif self.path == "/v1/models":
                if self._authorized():
                    self._send(200, {"object": "list",
                                     "data": [{"id": n, "object": "model", "created": 0,
                                               "owned_by": "workspace"} for n in names]})
            else:
                self._error(404, f"no route GET {self.path}", "invalid_request_error",
                            "not_found")

        def _content_length(self) -> int | None:
            """The declared body length, or None after answering 411/400/413."""
            values = self.headers.get_all("Content-Length") or []
            if not values:
                chunked = "chunked" in (self.headers.get("Transfer-Encoding") or "").lower()
                self._error(411, "a POST needs a Content-Length header" +
                            (" (chunked bodies are not supported)" if chunked else ""),
                            "invalid_request_error", close=True)
                return None
            raw = {v.strip().encode() for v in values}
            if len(raw) != 1 or not _DIGITS.fullmatch(next(iter(raw))):
                self._error(400, f"Content-Length {', '.join(values)!r} is not a single "
                            "non-negative integer", "invalid_request_error", close=True)
                return None
            length = int(next(iter(raw)))
            if length > MAX_BODY:
                self._error(413, f"body of {length} bytes exceeds the limit of {MAX_BODY}",
                            "invalid_request_error", close=True)
                return None
            return length

        def _drain(self) -> None:
            """Read a small body nobody will use, so that the client, still sending it, sees
            the error answer rather than a reset connection (the connection closes anyway)."""
            raw = (self.headers.get("Content-Length") or "").strip().encode()
            if self.command == "POST" and _DIGITS.fullmatch(raw) and int(raw) <= _DRAIN_MAX:
                try:
                    self.rfile.read(int(raw))
                except OSError:         # TimeoutError included
                    pass

        def do_POST(self):
            if not self._authorized():
                return
            if self.path not in ("/v1/chat/completions", "/v1/completions"):
                self._drain()
                self._error(404, f"no route POST {self.path}", "invalid_request_error",
                            "not_found", close=True)
                return
            length = self._content_length()
            if length is None:
                return
            raw = self.rfile.read(length)
            if len(raw) < length:           # the client closed early: nobody to answer
                self.close_connection = True
                return
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                self._error(400, f"request body is not JSON: {e}", "invalid_request_error")
                return
            try:
                answer = handle(lm, self.path, body, native_tools, names)
            except RequestError as e:
                self._error(e.status, str(e), e.kind, e.code, e.param)
                return
            except (ValueError, TypeError, OverflowError) as e:
                self._error(400, str(e), "invalid_request_error")
                return
            except Exception as e:  # noqa: BLE001  (an internal error must reach the client)
                self._error(500, f"{type(e).__name__}: {e}", "server_error")
                return
            self._send(200, answer)

    return PooledHTTPServer((host, port), Handler, max_workers=max_workers,
                            max_pending=max_pending)
