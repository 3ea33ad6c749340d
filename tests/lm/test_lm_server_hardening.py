"""lib/lm/server.py under hostile or heavy traffic, over real loopback sockets with a fake
model that answers at once: a burst of hundreds of connections, stalled and trickling
uploads, slowloris and idle connections beside a normal request, a full connection table
and request queue, deeply nested JSON, Content-Length abuse, unknown models, out-of-range
sampling parameters, API keys; and, with a tiny real model, that new `max_tokens` and `n`
values reuse a few compiled shapes."""
import contextlib
import http.client
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import jax
import pytest

from lib.lm import sampling
from lib.lm.client import ChatResult, Choice, LanguageModel, LMHTTPError, OpenAIClient
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig, init_params
from lib.lm.server import make_server
from lib.lm.tokenizer import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HANG_S = 20          # a guard against hangs only; nothing asserts how fast anything is


class EchoLM(LanguageModel):
    """Answers `n` copies of the last message's content at once; records every call."""

    name = "echo"

    def __init__(self):
        self.calls, self._lock = [], threading.Lock()

    def _answer(self, text, n, **kw):
        with self._lock:
            self.calls.append(dict(n=n, **kw))
        return ChatResult([Choice(i, text, [], "stop", None) for i in range(n)], self.name, 1, n)

    def chat(self, messages, *, n=1, **kw):
        return self._answer(messages[-1]["content"], n, **kw)

    def complete(self, prompt, *, n=1, **kw):
        return self._answer(prompt, n, **kw)


@contextlib.contextmanager
def running(lm=None, **kw):
    """The server (`make_server` with `kw`), serving in a thread."""
    server = make_server(lm or EchoLM(), "127.0.0.1", 0, **kw)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def serving(lm=None, **kw):
    """The port of a running server."""
    with running(lm, **kw) as server:
        yield server.server_port


def until(condition, what: str):
    """Wait (at most HANG_S) until `condition()` holds: the server's reader thread works
    asynchronously, and a test that reads its state waits for it rather than sleeping."""
    end = time.monotonic() + HANG_S
    while not condition():
        assert time.monotonic() < end, f"waited {HANG_S} s for {what}"
        time.sleep(0.01)


def post(port, body, path="/v1/chat/completions", headers=None):
    """(status, parsed JSON answer) of one POST; `body` is a dict or raw bytes."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=HANG_S) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def raw(port, data: bytes):
    """(status, headers, body) of the answer to the bytes `data` sent as they are."""
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_S) as s:
        s.sendall(data)
        resp = http.client.HTTPResponse(s)
        resp.begin()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


def chat_body(**fields):
    return {"model": "echo", "messages": [{"role": "user", "content": "hi"}], **fields}


# ----------------------------------------------------------------------------- connections


def test_a_burst_of_300_concurrent_connections_is_served_without_resets():
    lm, count = EchoLM(), 300
    start, results = threading.Barrier(count), [None] * count

    def one(i):
        start.wait()
        try:
            results[i] = post(port, chat_body(messages=[{"role": "user", "content": f"m{i}"}]))
        except OSError as e:                  # ConnectionResetError, refused, timeout
            results[i] = (type(e).__name__, None)

    with serving(lm) as port:
        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(HANG_S * 3)
    failed = [r[0] for r in results if r is None or r[0] != 200]
    assert not failed, f"{len(failed)} of {count} failed: {sorted(set(map(str, failed)))}"
    assert [r[1]["choices"][0]["message"]["content"] for r in results] == \
        [f"m{i}" for i in range(count)]
    assert len(lm.calls) == count


def _stall(port, data: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
    s.sendall(data)
    return s


def _read_until_closed(s: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def assert_openai_error(body: bytes, code: str | None = None) -> dict:
    """The error object of an OpenAI-shaped error body (message, type, param, code)."""
    err = json.loads(body)["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"], err
    assert err["type"] in ("invalid_request_error", "server_error"), err
    if code is not None:
        assert err["code"] == code, err
    return err


def test_stalled_uploads_are_answered_408_and_closed():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    with serving(read_timeout_s=0.5, max_workers=2) as port:
        stalled = [_stall(port, head + b'{"mod'), _stall(port, b"POST /v1/chat/comp")]
        for s in stalled:
            answer = _read_until_closed(s)
            s.close()
            assert answer.startswith(b"HTTP/1.1 408 ")
            err = assert_openai_error(answer.partition(b"\r\n\r\n")[2], "request_timeout")
            assert err["message"] == "the request did not arrive within 0.5 s of its first byte"
        assert post(port, chat_body())[0] == 200


def test_a_trickled_request_is_dropped_at_the_deadline_not_kept_alive_by_each_byte():
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"y" * 1000
    with serving(read_timeout_s=0.5) as port:
        s = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
        stop = threading.Event()
        sent = 0
        try:
            for i in range(0, len(request), 4):    # 4 bytes every 20 ms: 5 s for the headers
                s.sendall(request[i:i + 4])
                sent = i + 4
                s.settimeout(0.02)
                try:
                    if s.recv(1024) == b"":
                        stop.set()
                        break
                except TimeoutError:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            stop.set()
        finally:
            s.close()
    assert stop.is_set(), "the server kept reading a request that trickled in for 5 s"
    assert sent < len(request)


def _open_meanwhile(sockets: list[socket.socket]) -> bool:
    """True when no socket in `sockets` was closed or answered by the server."""
    for s in sockets:
        s.setblocking(False)
        try:
            s.recv(1)
            return False                      # an answer, or b"": closed
        except BlockingIOError:
            pass
        except OSError:
            return False
    return True


def test_slowloris_connections_hold_no_worker_and_are_cut_at_their_deadline():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Pad: "
    with serving(read_timeout_s=4.0, max_workers=2) as port:
        slow = [_stall(port, head[:1]) for _ in range(20)]
        t0 = time.monotonic()
        for i in range(1, 4):                 # a byte each, every 0.1 s: each conn. is active
            for s in slow:
                s.sendall(head[i:i + 1])
            time.sleep(0.1)
        assert post(port, chat_body())[0] == 200      # answered while all 20 are still open
        assert _open_meanwhile(slow)
        ended = []
        for s in slow:                        # the rest of the head, one byte at a time
            s.setblocking(True)
            s.settimeout(0.2)
            for i in range(200):
                try:
                    s.sendall(b"y")
                    if s.recv(65536):
                        break                 # the 408 answer
                except TimeoutError:
                    continue
                except OSError:
                    break
            ended.append(time.monotonic() - t0)
            s.close()
    assert max(ended) < 4.0 + 3.0, ended      # cut at the deadline, not kept by each byte


def test_idle_connections_hold_no_worker():
    with serving(read_timeout_s=5.0, max_workers=2) as port:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
                for _ in range(50)]
        try:
            assert post(port, chat_body())[0] == 200
            assert _open_meanwhile(idle)
        finally:
            for s in idle:
                s.close()


def test_a_full_connection_table_evicts_an_idle_connection_else_answers_503():
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    with running(max_connections=4) as server:
        port = server.server_port
        idle = [socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
                for _ in range(4)]
        until(lambda: len(server._idle) == 4, "the four idle connections to be adopted")
        assert post(port, chat_body())[0] == 200          # the oldest idle one made room
        assert _read_until_closed(idle[0]) == b""
        # the POST's connection closed on the server's side too (until then it holds a slot,
        # and the fourth stalled request below would find the table full)
        until(lambda: len(server._reading) + server._busy == 3, "the POST's connection to close")
        busy = [_stall(port, head) for _ in range(4)]     # requests under way: not idle
        until(lambda: len(server._partial) == 4, "the four stalled requests to be read")
        for s in idle[1:]:
            assert _read_until_closed(s) == b""
        t0 = time.monotonic()
        status, headers, body = raw(port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 503 and time.monotonic() - t0 < HANG_S / 2
        assert headers["connection"] == "close" and headers["retry-after"] == "1"
        assert_openai_error(body, "server_overloaded")
        for s in busy + idle:
            s.close()


class BlockingLM(EchoLM):
    """An EchoLM whose answers wait until `release` is set."""

    def __init__(self):
        super().__init__()
        self.release, self.entered = threading.Event(), threading.Event()

    def _answer(self, text, n, **kw):
        self.entered.set()
        assert self.release.wait(HANG_S)
        return super()._answer(text, n, **kw)


def test_a_full_request_queue_answers_503_in_openai_shape():
    lm = BlockingLM()
    with running(lm, max_workers=1, max_pending=1) as server:
        port, results = server.server_port, {}
        first = threading.Thread(target=lambda: results.setdefault("a", post(port, chat_body())))
        first.start()
        assert lm.entered.wait(HANG_S)        # the one worker is in the model
        second = threading.Thread(target=lambda: results.setdefault("b", post(port, chat_body())))
        second.start()
        until(lambda: server._queue.qsize() == 1, "the second request to wait in the queue")
        status, answer = post(port, chat_body())
        assert status == 503
        assert_openai_error(json.dumps(answer).encode(), "server_overloaded")
        lm.release.set()
        first.join(HANG_S)
        second.join(HANG_S)
    assert results["a"][0] == results["b"][0] == 200


@pytest.mark.parametrize("request_bytes, status", [
    (b"PUT /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 501),
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /v1/models HTTP/9.9\r\nHost: x\r\n\r\n", 505),
    (b"GET /x HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", 431),
])
def test_http_level_refusals_are_json_in_openai_shape(request_bytes, status):
    with serving() as port:
        got, headers, body = raw(port, request_bytes)
    assert got == status and headers["content-type"] == "application/json"
    assert_openai_error(body)


def test_a_head_over_the_limit_is_431_without_waiting_for_its_end():
    with serving() as port:
        s = _stall(port, b"GET /v1/models HTTP/1.1\r\nX-Pad: " + b"y" * 70000)
        answer = _read_until_closed(s)
        s.close()
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert_openai_error(answer.partition(b"\r\n\r\n")[2], "request_header_too_large")


# ----------------------------------------------------------------------------- Content-Length


@pytest.mark.parametrize("headers, status, message", [
    (b"", 411, "needs a Content-Length"),
    (b"Transfer-Encoding: chunked\r\n", 411, "chunked bodies are not supported"),
    (b"Content-Length: abc\r\n", 400, "'abc' is not a single non-negative integer"),
    (b"Content-Length: -1\r\n", 400, "'-1' is not a single non-negative integer"),
    (b"Content-Length: +2\r\n", 400, "'+2' is not a single"),
    (b"Content-Length: 1_0\r\n", 400, "'1_0' is not a single"),
    (b"Content-Length: 2\r\nContent-Length: 3\r\n", 400, "'2, 3' is not a single"),
    (b"Content-Length: 20971520\r\n", 413, "body of 20971520 bytes exceeds the limit of 16777216"),
])
def test_content_length_is_validated_before_any_body_is_read(headers, status, message):
    lm = EchoLM()
    with serving(lm) as port:
        # The body is sent but the connection stays open: a server that reads "to the end"
        # (the old answer to Content-Length: -1) would wait here until the hang guard.
        got, hdrs, body = raw(port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" +
                              headers + b"\r\n{}")
    assert got == status
    err = json.loads(body)["error"]
    assert message in err["message"] and err["type"] == "invalid_request_error"
    assert hdrs["connection"] == "close" and lm.calls == []


def test_an_exact_content_length_keeps_the_connection_alive():
    def one(text):
        body = json.dumps(chat_body(messages=[{"role": "user", "content": text}])).encode()
        return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                str(len(body)).encode() + b"\r\n\r\n" + body)

    def answer(f):
        status, length = int(f.readline().split()[1]), 0
        while (line := f.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return status, json.loads(f.read(length))["choices"][0]["message"]["content"]

    with serving() as port, socket.create_connection(("127.0.0.1", port), timeout=HANG_S) as s:
        f = s.makefile("rb")
        for sent in (["a"], ["b"], ["c", "d", "e"]):     # three pipelined at the end
            s.sendall(b"".join(one(t) for t in sent))
            assert [answer(f) for _ in sent] == [(200, t) for t in sent]


# ----------------------------------------------------------------------------- nesting


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("where, depth", [
    ("body", 100_000), ("tools", 5_000), ("messages", 900), ("tools", 70)])
def test_deeply_nested_json_is_400_before_parsing(where, depth):
    lm = EchoLM()
    nested = "[" * depth + "]" * depth
    body = chat_body()
    if where == "tools":
        body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": "X"}}]
    elif where == "messages":
        body["messages"] = [{"role": "user", "content": "hi", "extra": "X"}]
    else:
        body["x"] = "X"
    data = json.dumps(body).replace('"X"', nested).encode()
    total = depth + {"body": 1, "tools": 4, "messages": 3}[where]
    with serving(lm) as port:
        status, answer = post(port, data)
    assert status == 400, answer
    assert answer["error"]["message"] == (f"request body nests arrays and objects {total} "
                                          "deep; the limit is 64")
    assert_openai_error(json.dumps(answer).encode())
    assert lm.calls == []


def test_nesting_within_the_limit_and_brackets_in_strings_are_served():
    lm = EchoLM()
    body = chat_body(messages=[{"role": "user", "content": "[{" * 500}])
    body["tools"] = [{"type": "function", "function": {"name": "f", "parameters": _nested(50)}}]
    with serving(lm) as port:
        status, answer = post(port, body)
    assert status == 200 and answer["choices"][0]["message"]["content"] == "[{" * 500


# ----------------------------------------------------------------------------- models


def test_unknown_model_is_404_model_not_found_and_served_names_are_listed():
    lm = EchoLM()
    with serving(lm, model_names=["echo", "echo-alias"]) as port:
        status, answer = post(port, chat_body(model="gpt-4o"))
        assert status == 404
        assert answer["error"] == {
            "message": "The model 'gpt-4o' does not exist; this server serves echo, echo-alias",
            "type": "invalid_request_error", "param": "model", "code": "model_not_found"}
        assert post(port, {"model": "nope", "prompt": "x"}, "/v1/completions")[0] == 404
        assert lm.calls == []
        assert post(port, chat_body(model="echo-alias"))[1]["model"] == "echo-alias"
        no_model = chat_body()
        del no_model["model"]
        assert post(port, no_model)[1]["model"] == "echo"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=HANG_S) as r:
            assert [m["id"] for m in json.loads(r.read())["data"]] == ["echo", "echo-alias"]
        with pytest.raises(LMHTTPError, match="model_not_found") as e:
            OpenAIClient(f"http://127.0.0.1:{port}/v1", "other", max_retries=0,
                         cache_mode="off").chat([{"role": "user", "content": "x"}])
        assert e.value.status == 404


# ----------------------------------------------------------------------------- sampling fields


NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("path, field, value, message", [
    ("chat", "temperature", NAN, "must be a finite number"),
    ("chat", "temperature", INF, "must be a finite number"),
    ("chat", "temperature", -INF, "must be a finite number"),
    ("chat", "temperature", 10 ** 400, "must be a finite number"),
    ("chat", "temperature", -0.1, "out of range [0.0, 2.0]"),
    ("chat", "temperature", 2.5, "out of range [0.0, 2.0]"),
    ("chat", "temperature", "1", "must be a number"),
    ("chat", "top_p", 0, "out of range (0.0, 1.0]"),
    ("chat", "top_p", 1.01, "out of range (0.0, 1.0]"),
    ("chat", "top_p", NAN, "must be a finite number"),
    ("chat", "n", 0, "out of range [1, 128]"),
    ("chat", "n", 129, "out of range [1, 128]"),
    ("chat", "n", 2.0, "must be an integer"),
    ("chat", "n", True, "must be an integer"),
    ("chat", "max_tokens", 0, "out of range [1, 65536]"),
    ("chat", "max_tokens", 10 ** 9, "out of range [1, 65536]"),
    ("chat", "seed", 2 ** 80, "out of range [-9223372036854775808, 9223372036854775807]"),
    ("chat", "seed", 2 ** 63, "out of range"),
    ("chat", "seed", -2 ** 63 - 1, "out of range"),
    ("chat", "seed", 1.5, "must be an integer"),
    ("chat", "top_logprobs", 21, "out of range [0, 20]"),
    ("chat", "top_logprobs", -1, "out of range [0, 20]"),
    ("chat", "logprobs", 5, "must be a boolean"),
    ("completions", "logprobs", 21, "out of range [0, 20]"),
    ("completions", "logprobs", True, "must be an integer"),
    ("completions", "temperature", NAN, "must be a finite number"),
    ("completions", "seed", 2 ** 80, "out of range"),
])
def test_bad_sampling_fields_are_400_naming_the_field(path, field, value, message):
    lm = EchoLM()
    body = chat_body() if path == "chat" else {"model": "echo", "prompt": "x"}
    with serving(lm) as port:
        status, answer = post(port, json.dumps({**body, field: value}).encode(), f"/v1/{path}"
                              if path == "completions" else "/v1/chat/completions")
    assert status == 400, answer
    err = answer["error"]
    assert err["param"] == field and f"field '{field}'" in err["message"]
    assert message in err["message"] and err["type"] == "invalid_request_error"
    assert lm.calls == []                   # refused before the model is called


def test_edge_values_reach_the_model_unchanged():
    lm = EchoLM()
    edges = [dict(temperature=0, top_p=1e-9, n=128, max_tokens=65536, seed=2 ** 63 - 1,
                  top_logprobs=20),
             dict(temperature=2, top_p=1, n=1, max_tokens=1, seed=-2 ** 63, logprobs=True)]
    with serving(lm) as port:
        for fields in edges:
            status, answer = post(port, chat_body(**fields))
            assert status == 200 and len(answer["choices"]) == fields["n"]
        assert post(port, {"model": "echo", "prompt": "x", "logprobs": 0}, "/v1/completions")[0] \
            == 200
    got = lm.calls
    assert [c["temperature"] for c in got[:2]] == [0.0, 2.0]
    assert [c["seed"] for c in got[:2]] == [2 ** 63 - 1, -2 ** 63]
    assert [c["top_logprobs"] for c in got[:2]] == [20, 0]
    assert [c["logprobs"] for c in got] == [True, True, True]
    assert [c["max_tokens"] for c in got[:2]] == [65536, 1]


# ----------------------------------------------------------------------------- compiled shapes


def test_new_max_tokens_and_n_values_reuse_a_bounded_set_of_compiled_shapes(monkeypatch):
    tok = Tokenizer()
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=16, num_layers=1, num_heads=2, d_ff=32,
                   max_len=32)
    params = jax.tree.map(lambda x: x * 6.0 if x.ndim == 2 else x,   # not a constant token
                          init_params(cfg, jax.random.key(0)))
    monkeypatch.setattr(sampling, "MAX_SHAPES", 1000, raising=False)
    with serving(LocalLM(cfg, params, tok, name="tiny")) as port:
        def tokens(max_tokens, n):
            status, answer = post(port, {"model": "tiny", "prompt": "abc", "temperature": 0,
                                         "max_tokens": max_tokens, "n": n, "logprobs": 0},
                                  "/v1/completions")
            assert status == 200, answer
            assert [c["finish_reason"] for c in answer["choices"]] == ["length"] * n
            return [c["logprobs"]["tokens"] for c in answer["choices"]]

        before = sampling._decode._cache_size()
        longest = tokens(16, 4)[0]
        for max_tokens, n in [(9, 3), (10, 4), (13, 3), (11, 4), (15, 3), (12, 3)]:
            assert tokens(max_tokens, n) == [longest[:max_tokens]] * n   # cut to the request
        assert sampling._decode._cache_size() - before <= 1   # batch 4 x buffer 16: one shape
        monkeypatch.setattr(sampling, "MAX_SHAPES", 1, raising=False)
        tokens(3, 1)                          # a new shape past the bound drops the others
        assert sampling._decode._cache_size() == 1


# ----------------------------------------------------------------------------- API key


def test_api_key_is_required_on_v1_routes_when_set():
    lm = EchoLM()
    with serving(lm, api_key="s3cret") as port:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"},
                        {"Authorization": "Basic s3cret"}):
            status, answer = post(port, chat_body(), headers=headers)
            assert status == 401 and answer["error"]["code"] == "invalid_api_key", headers
        status, hdrs, _ = raw(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 401 and hdrs["www-authenticate"] == "Bearer"
        assert lm.calls == []
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=HANG_S) as r:
            assert r.status == 200              # liveness stays open
        for scheme in ("Bearer", "bearer"):
            assert post(port, chat_body(), headers={"Authorization": f"{scheme} s3cret"})[0] \
                == 200
        url = f"http://127.0.0.1:{port}/v1"
        assert OpenAIClient(url, "echo", api_key="s3cret", max_retries=0, cache_mode="off").chat(
            [{"role": "user", "content": "yo"}]).texts == ["yo"]
        with pytest.raises(LMHTTPError, match="HTTP 401.*API key") as e:
            OpenAIClient(url, "echo", max_retries=0, cache_mode="off").chat(
                [{"role": "user", "content": "yo"}])
        assert e.value.status == 401
    assert len(lm.calls) == 3


@pytest.mark.parametrize("kw, message", [
    (dict(api_key=""), "api_key must be a non-empty string"),
    (dict(model_names=["echo", ""]), "must be non-empty strings"),
    (dict(read_timeout_s=0), "read_timeout_s = 0 must be > 0"),
    (dict(max_workers=0), "max_workers = 0"),
    (dict(idle_timeout_s=0), "idle_timeout_s = 0 must be > 0"),
    (dict(max_connections=0), "max_connections = 0 must be >= 1"),
])
def test_bad_server_settings_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        make_server(EchoLM(), **kw)


@pytest.mark.parametrize("args, message", [
    (["--api_key_file=/nonexistent/key.txt"],
     "--api_key_file=/nonexistent/key.txt: No such file or directory"),
    (["--api_key_file=/dev/null"], "--api_key_file=/dev/null is empty"),
    (["--api_key=a", "--api_key_file=/dev/null"], "give --api_key or --api_key_file, not both"),
])
def test_serve_lm_refuses_bad_key_options_before_loading_anything(args, message):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "serve_lm.py"),
                           "--workdir=/nonexistent/run", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert proc.returncode == 1 and proc.stderr.strip().splitlines()[-1] == message
