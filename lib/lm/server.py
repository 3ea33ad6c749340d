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

Errors are `{"error": {"message", "type", "param", "code"}}` (OpenAI's shape), every one:
* 400 `invalid_request_error`: a body that is not JSON or nests arrays/objects more than
  MAX_JSON_DEPTH deep (measured before parsing), a missing or ill-typed field, a
  sampling parameter out of range (`param` names it: temperature in [0, 2] and finite,
  top_p in (0, 1], n in [1, 128], max_tokens in [1, 65536], seed a 64-bit signed int (what
  `jax.random.key` takes), top_logprobs / completion logprobs in [0, 20], chat logprobs a
  bool), or a request the model refuses (unknown special token, prompt longer than the
  context); also a Content-Length that is not a plain non-negative integer;
* 401 `invalid_api_key` when the server has an `api_key` and the request lacks
  `Authorization: Bearer <key>` (every `/v1/...` route; `/health` stays open);
* 404 `model_not_found` for a `model` the server does not serve (`model_names`; a request
  without `model` gets the first), `not_found` for an unknown route;
* 408 `request_timeout` for a request that did not fully arrive within `read_timeout_s` of
  its first byte; 411 for a POST without Content-Length (chunked bodies are not read), 413
  for a body over 16 MiB (refused from the header, nothing of it is read), 431 for a head
  over MAX_HEAD bytes; http.server's own refusals (a bad request line, 501) are JSON too;
* 500 `server_error` for anything else; 503 `server_overloaded` (with Retry-After) when
  every connection slot is busy, the queue of complete requests is full, or unfinished
  requests hold too many bytes.
`native_tools=False` makes the server reject `tools` with HTTP 400 like servers without
tool calling do (the client then falls back to the text format).

Connections (`PooledHTTPServer`): one selector thread reads every connection's request,
and only a complete one goes to a worker thread, so idle and slow clients hold no worker;
a request must arrive within `read_timeout_s` of its first byte (a slowloris client is
cut off then, whatever its pace); an idle connection is closed after `idle_timeout_s`, or
sooner when a new connection needs its slot. `max_tokens` and `n` cost no compile per new
value (lib/lm/sampling.py compiles power-of-two buffers and cuts the output to the request).
The model itself generates one request at a time (its own lock).
"""
from __future__ import annotations

import collections
import hmac
import io
import json
import math
import queue
import re
import resource
import selectors
import socket
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import numpy as np

from lib.lm.client import ChatResult, LanguageModel

MAX_BODY = 16 * 2 ** 20
MAX_N = 128                            # OpenAI's limit on `n`
MAX_TOKENS = 65536                     # the model refuses more than its context anyway
MAX_TOP_LOGPROBS = 20                  # OpenAI's limit on `top_logprobs`
MAX_TEMPERATURE = 2.0                  # OpenAI's range is [0, 2]
SEED_RANGE = (-2 ** 63, 2 ** 63 - 1)   # jax.random.key takes a C long (OverflowError beyond)
MAX_HEAD = 2 ** 16                     # request line and headers, bytes
MAX_JSON_DEPTH = 64                    # arrays/objects nested deeper: 400 before parsing
MAX_BUFFERED = 256 * 2 ** 20           # bytes of unfinished requests, all connections
_DIGITS = re.compile(rb"[0-9]+")
_HEAD_END = re.compile(rb"\n\r?\n")   # the blank line after the headers
_EXPECT_100 = re.compile(rb"\nexpect[ \t]*:[ \t]*100-continue", re.IGNORECASE)
_SWEEP_S = 0.05                        # how often the reader checks deadlines


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


def json_depth(raw: bytes) -> int:
    """How deeply arrays and objects nest in the JSON text `raw` (brackets inside strings do
    not count); vectorised, linear time, no recursion, so any body can be measured before
    it is parsed. Exact for valid JSON and for the valid prefix of invalid JSON."""
    text = raw.replace(b"\\\\", b"").replace(b'\\"', b"")     # escapes: no quote is escaped
    depth = peak = quotes = 0
    for start in range(0, len(text), 2 ** 20):
        a = np.frombuffer(text, np.uint8, min(2 ** 20, len(text) - start), start)
        seen = quotes + np.cumsum(a == ord('"'), dtype=np.int64)
        outside = (seen & 1) == 0
        step = (outside & ((a == ord("[")) | (a == ord("{")))).astype(np.int32) \
            - (outside & ((a == ord("]")) | (a == ord("}"))))
        level = depth + np.cumsum(step)
        peak, depth, quotes = max(peak, int(level.max())), int(level[-1]), int(seen[-1])
    return peak


def _body_length(head: bytes) -> int:
    """The body length a request head declares: its one Content-Length when that is a plain
    integer <= MAX_BODY, else 0 (the handler then refuses the request from its head)."""
    values = set()
    for line in head.split(b"\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            values.add(value.strip())
    if len(values) == 1:
        value = values.pop()
        if _DIGITS.fullmatch(value) and int(value) <= MAX_BODY:
            return int(value)
    return 0


def error_answer(status: int, message: str, kind: str, code: str | None) -> bytes:
    """A complete HTTP answer (Connection: close) whose body is OpenAI's error JSON."""
    body = json.dumps({"error": {"message": message, "type": kind, "param": None,
                                 "code": code}}).encode()
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json"
            f"\r\nContent-Length: {len(body)}\r\nConnection: close\r\n")
    if status == 503:
        head += "Retry-After: 1\r\n"
    return (head + "\r\n").encode() + body


class _Conn:
    """A connection the reader holds: bytes of the next request so far (`buf`), the
    deadline of that request (set at its first byte), when it became idle, and, once
    its head is complete, the request's total length (`need`)."""

    __slots__ = ("sock", "addr", "buf", "deadline", "idle_since", "need", "scanned")

    def __init__(self, sock: socket.socket, addr):
        self.sock, self.addr, self.buf = sock, addr, bytearray()
        self.deadline = self.idle_since = 0.0
        self.need: int | None = None
        self.scanned = 0


class _Request:
    """One complete request handed to a worker; `keep_alive` is set by the handler."""

    __slots__ = ("sock", "data", "keep_alive")

    def __init__(self, sock: socket.socket, data: bytes):
        self.sock, self.data, self.keep_alive = sock, data, False


class _DeadlineWriter:
    """The answer side of a connection: `write` sends all of `data`, or raises TimeoutError
    once `timeout_s` has passed since the answer's first write, however slowly the client
    reads (a plain socket timeout restarts with every chunk it accepts)."""

    def __init__(self, sock: socket.socket, timeout_s: float):
        self._sock, self._timeout_s, self._deadline = sock, timeout_s, None

    def write(self, data) -> int:
        if self._deadline is None:
            self._deadline = time.monotonic() + self._timeout_s
        view = memoryview(data).cast("B")
        while view:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the client did not read the answer within the timeout")
            self._sock.settimeout(remaining)
            view = view[self._sock.send(view):]
        return len(data)

    def flush(self) -> None:
        pass


class PooledHTTPServer(HTTPServer):
    """An `HTTPServer` that reads requests on one selector thread and answers complete ones
    on at most `max_workers` daemon threads (started as needed), so a connection that is
    idle or still sending its request holds no worker.

    * A request (line, headers and body) must arrive within `read_timeout_s` of its first
      byte, however slowly it trickles in: otherwise 408 and the connection is closed. A
      connection that sends nothing for `idle_timeout_s` is closed.
    * At `max_connections` open connections a new one closes the longest-idle connection,
      or, when none is idle, is answered 503 at once.
    * Complete requests wait for a worker in a queue of at most `max_pending` (503 beyond).
    * A head (line and headers) over MAX_HEAD bytes is 431; when unfinished requests hold
      MAX_BUFFERED bytes in all, a connection that sends more is answered 503.
    * An answer the client does not read within `read_timeout_s` is dropped.
    Refusals are OpenAI-shaped JSON (`error_answer`). The kernel's listen backlog is
    `request_queue_size` (capped by net.core.somaxconn)."""

    request_queue_size = 1024

    def __init__(self, address, handler, max_workers: int = 64, max_pending: int = 1024, *,
                 read_timeout_s: float = 10.0, idle_timeout_s: float = 30.0,
                 max_connections: int | None = None):
        if max_workers < 1 or max_pending < 1:
            raise ValueError(f"max_workers = {max_workers} and max_pending = {max_pending} "
                             "must be >= 1")
        if not read_timeout_s > 0 or not idle_timeout_s > 0:
            raise ValueError(f"read_timeout_s = {read_timeout_s} and idle_timeout_s = "
                             f"{idle_timeout_s} must be > 0")
        if max_connections is None:       # stay below the open-file limit
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            max_connections = 4096 if soft == resource.RLIM_INFINITY else min(4096, soft - 64)
        if max_connections < 1:
            raise ValueError(f"max_connections = {max_connections} must be >= 1")
        self.max_workers, self.max_connections = max_workers, max_connections
        self.read_timeout_s, self.idle_timeout_s = read_timeout_s, idle_timeout_s
        self._queue: queue.Queue = queue.Queue(max_pending)
        self._lock = threading.Lock()
        self._workers = self._idle_workers = self._busy = 0
        super().__init__(address, handler)
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._handoff: collections.deque = collections.deque()  # (sock, addr, bytes, is_new)
        self._reading: dict[socket.socket, _Conn] = {}
        self._idle: dict[_Conn, None] = {}          # nothing buffered; oldest first
        self._partial: dict[_Conn, None] = {}       # a request under way
        self._buffered = 0
        self._closing = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True,
                                        name="lm-server-reader")
        self._reader.start()

    # ------------------------------------------------------------------ accepting thread
    def process_request(self, request, client_address):
        self._handoff.append((request, client_address, b"", True))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:                    # the pipe is full: the reader wakes anyway
            pass

    # ------------------------------------------------------------------ reader thread
    def _read_loop(self) -> None:
        next_sweep = 0.0
        while not self._closing:
            events = self._sel.select(_SWEEP_S if self._reading else None)
            for key, _ in events:
                if key.data is None:
                    try:
                        while self._wake_r.recv(4096):
                            pass
                    except OSError:        # BlockingIOError: drained
                        pass
                elif key.data.sock in self._reading:
                    self._guarded(self._on_readable, key.data)
            while self._handoff:
                self._guarded(self._adopt, *self._handoff.popleft())
            now = time.monotonic()
            if now >= next_sweep:
                self._sweep(now)
                next_sweep = now + _SWEEP_S

    def _guarded(self, fn, *args) -> None:
        """Run one step of the reader; an unexpected error closes that connection only."""
        try:
            fn(*args)
        except Exception:  # noqa: BLE001  (the reader must keep serving everyone else)
            conn = args[0] if isinstance(args[0], _Conn) else self._reading.get(args[0])
            self.handle_error(args[0], None)
            if conn is not None:
                self._close(conn)
            elif isinstance(args[0], socket.socket):
                self.shutdown_request(args[0])

    def _adopt(self, sock: socket.socket, addr, data: bytes, is_new: bool) -> None:
        """Take a new connection (refusing or making room at max_connections), or one a
        worker handed back with the bytes already read past its last request."""
        if is_new:
            with self._lock:
                open_now = len(self._reading) + self._busy
            if open_now >= self.max_connections:
                if not self._idle:
                    self._answer_and_close(sock, error_answer(
                        503, f"the server holds {self.max_connections} connections, all "
                        "busy; retry later", "server_error", "server_overloaded"))
                    return
                self._close(next(iter(self._idle)))
        sock.setblocking(False)
        conn = _Conn(sock, addr)
        self._reading[sock] = conn
        self._sel.register(sock, selectors.EVENT_READ, conn)
        now = time.monotonic()
        if data:
            conn.buf += data
            self._buffered += len(data)
            conn.deadline = now + self.read_timeout_s
            self._partial[conn] = None
            self._advance(conn)
        else:
            conn.idle_since = now
            self._idle[conn] = None

    def _on_readable(self, conn: _Conn) -> None:
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:                      # the client closed (or reset) the connection
            self._close(conn)
            return
        if self._buffered + len(chunk) > MAX_BUFFERED:
            self._refuse(conn, 503, f"the server is buffering {MAX_BUFFERED} bytes of "
                         "unfinished requests; retry later", "server_error", "server_overloaded")
            return
        if not conn.buf:                   # the first byte of a request: its deadline starts
            conn.deadline = time.monotonic() + self.read_timeout_s
            self._idle.pop(conn, None)
            self._partial[conn] = None
        conn.buf += chunk
        self._buffered += len(chunk)
        self._advance(conn)

    def _advance(self, conn: _Conn) -> None:
        """Hand the request to a worker once its head and declared body are all here."""
        if conn.need is None:
            end = _HEAD_END.search(conn.buf, max(0, conn.scanned - 2))
            if end is None or end.end() > MAX_HEAD:
                conn.scanned = len(conn.buf)
                if len(conn.buf) > MAX_HEAD:
                    self._refuse(conn, 431, f"the request line and headers exceed {MAX_HEAD} "
                                 "bytes", "invalid_request_error", "request_header_too_large")
                return
            head = bytes(conn.buf[:end.end()])
            body = _body_length(head)
            conn.need = end.end() + body
            if body and len(conn.buf) < conn.need and _EXPECT_100.search(head):
                try:
                    conn.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
                except OSError:
                    pass
        if len(conn.buf) < conn.need:
            return
        data, rest = bytes(conn.buf[:conn.need]), bytes(conn.buf[conn.need:])
        self._forget(conn)
        try:
            self._queue.put_nowait((conn.sock, conn.addr, data, rest))
        except queue.Full:
            self._answer_and_close(conn.sock, error_answer(
                503, f"{self._queue.maxsize} requests are already waiting for a worker; "
                "retry later", "server_error", "server_overloaded"))
            return
        with self._lock:
            self._busy += 1
            if self._queue.qsize() > self._idle_workers and self._workers < self.max_workers:
                self._workers += 1
                threading.Thread(target=self._work, daemon=True,
                                 name=f"lm-server-{self._workers}").start()

    def _sweep(self, now: float) -> None:
        """408 for requests past their deadline; close connections idle too long."""
        for conn in [c for c in self._partial if now > c.deadline]:
            self._refuse(conn, 408, f"the request did not arrive within {self.read_timeout_s:g}"
                         " s of its first byte", "invalid_request_error", "request_timeout")
        for conn in list(self._idle):      # oldest first
            if now <= conn.idle_since + self.idle_timeout_s:
                break
            self._close(conn)

    def _forget(self, conn: _Conn) -> None:
        """Stop reading `conn` (its socket stays open)."""
        try:
            self._sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        self._reading.pop(conn.sock, None)
        self._idle.pop(conn, None)
        self._partial.pop(conn, None)
        self._buffered -= len(conn.buf)
        conn.buf = bytearray()

    def _close(self, conn: _Conn) -> None:
        self._forget(conn)
        self.shutdown_request(conn.sock)

    def _refuse(self, conn: _Conn, status: int, message: str, kind: str, code: str) -> None:
        self._forget(conn)
        self._answer_and_close(conn.sock, error_answer(status, message, kind, code))

    def _answer_and_close(self, sock: socket.socket, answer: bytes) -> None:
        """Send a short answer without waiting (what does not fit is lost), then close."""
        try:
            sock.setblocking(False)
            sock.send(answer)
        except OSError:
            pass
        self.shutdown_request(sock)

    # ------------------------------------------------------------------ workers
    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle_workers += 1
            item = self._queue.get()
            with self._lock:
                self._idle_workers -= 1
            if item is None:
                return
            sock, addr, data, rest = item
            request = _Request(sock, data)
            try:
                sock.setblocking(True)
                self.finish_request(request, addr)
            except Exception:  # noqa: BLE001  (like socketserver: report, keep serving)
                self.handle_error(sock, addr)
                request.keep_alive = False
            with self._lock:
                self._busy -= 1
            if request.keep_alive and not self._closing:
                self._handoff.append((sock, addr, rest, False))
                self._wake()
            else:
                self.shutdown_request(sock)

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
        self._closing = True
        self._wake()
        super().server_close()
        self._reader.join(timeout=10)
        for conn in list(self._reading.values()):
            self._close(conn)
        while self._handoff:
            self.shutdown_request(self._handoff.popleft()[0])
        while True:                     # close requests no worker has started on
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in range(self._workers):  # workers finish their request, then stop
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()


def make_server(lm: LanguageModel, host: str = "127.0.0.1", port: int = 0,
                native_tools: bool = True, log=None, *, model_names: Sequence[str] | None = None,
                api_key: str | None = None, read_timeout_s: float = 10.0,
                idle_timeout_s: float = 30.0, max_workers: int = 64, max_pending: int = 1024,
                max_connections: int | None = None) -> PooledHTTPServer:
    """A `PooledHTTPServer` serving `lm` (call `serve_forever`; port 0 picks a free one).

    `model_names`: the names a request's `model` may take (default `[lm.name]`; the first
    is also the answer to a request without `model`). `api_key`: when set, `/v1/...`
    requests need `Authorization: Bearer <api_key>`. `read_timeout_s`, `idle_timeout_s`,
    `max_workers`, `max_pending`, `max_connections`: see `PooledHTTPServer` (by default
    max_connections is 4096 or the open-file limit less 64). See the module docstring for
    the error answers."""
    names = list(model_names) if model_names else [lm.name]
    if not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"model_names = {names!r} must be non-empty strings")
    if api_key is not None and (not isinstance(api_key, str) or not api_key):
        raise ValueError("api_key must be a non-empty string (or None for no authentication)")
    if not read_timeout_s > 0:
        raise ValueError(f"read_timeout_s = {read_timeout_s} must be > 0")
    expected = api_key.encode() if api_key else None

    class Handler(BaseHTTPRequestHandler):
        """Answers the one complete request in `self.request.data` (a `_Request`)."""

        protocol_version = "HTTP/1.1"

        def setup(self):
            self.connection = self.request.sock
            self.rfile = io.BytesIO(self.request.data)
            self.wfile = _DeadlineWriter(self.connection, read_timeout_s)

        def handle(self):
            self.handle_one_request()
            self.request.keep_alive = not self.close_connection

        def finish(self):
            pass

        def handle_expect_100(self):            # the reader already answered 100 Continue
            return True

        def log_message(self, fmt, *args):      # quiet unless a logger is given
            if log:
                log(fmt % args)

        def send_error(self, code, message=None, explain=None):  # noqa: ARG002
            """http.server's own refusals (a bad request line, 431, 501, ...) as JSON."""
            if self.request_version == "HTTP/0.9":     # an unparsed line: answer in full
                self.request_version = self.protocol_version
            self._error(code, message or HTTPStatus(code).phrase,
                        "server_error" if code >= 500 else "invalid_request_error", close=True)

        def _send(self, status: int, obj: dict, close: bool = False,
                  headers: Sequence[tuple[str, str]] = ()) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers:
                self.send_header(k, v)
            if close:
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

        def do_POST(self):
            if not self._authorized():
                return
            if self.path not in ("/v1/chat/completions", "/v1/completions"):
                self._error(404, f"no route POST {self.path}", "invalid_request_error",
                            "not_found", close=True)
                return
            length = self._content_length()
            if length is None:
                return
            raw = self.rfile.read(length)
            if len(raw) < length:           # never: the reader waits for the whole body
                self.close_connection = True
                return
            if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:
                depth = json_depth(raw)
                if depth > MAX_JSON_DEPTH:
                    self._error(400, f"request body nests arrays and objects {depth} deep; "
                                f"the limit is {MAX_JSON_DEPTH}", "invalid_request_error")
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
                            max_pending=max_pending, read_timeout_s=read_timeout_s,
                            idle_timeout_s=idle_timeout_s, max_connections=max_connections)
