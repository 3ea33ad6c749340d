"""One interface for language models, and a client for OpenAI-compatible endpoints.

`LanguageModel` is what every experiment takes (EditLord's editor and rule extractor,
SWE-Gym's agent policy and YES/NO verifier, JETTS's generators and judges):

    result = lm.chat(messages, n=10, temperature=1.0, top_p=0.95, max_tokens=512,
                     logprobs=True, top_logprobs=5, tools=[...], seed=0)
    result.texts                  # [str] * n
    result.choices[i].tool_calls  # OpenAI-style dicts, parsed from native calls or text
    result.choices[i].logprobs    # [TokenLogprob(token, logprob, top=[(tok, lp)])]
    option_probabilities(result.choices[0], [" YES", " NO"])   # verifier scores

Implementations: `OpenAIClient` (any `/v1/chat/completions` server: vLLM, SGLang, the
workspace's tools/serve_lm.py, a hosted API) and `lib.lm.local.LocalLM` (a workspace
checkpoint in-process).

`OpenAIClient` behaviour:
* retries with exponential back-off (`backoff_s * 2^attempt`, capped, plus jitter) on
  connection errors, timeouts, HTTP 429/5xx and malformed responses (not JSON, no
  `choices`); after `max_retries` it raises `LMResponseError` / `LMHTTPError` naming the
  URL, the status and the start of the body. Other HTTP 4xx are raised at once. An answer
  is never silently empty.
* at most `max_concurrency` requests in flight (a semaphore shared by `chat_many` threads);
* an on-disk cache keyed by SHA-256 of (endpoint, request body): `cache_mode="readwrite"`
  stores and reuses answers, `"replay"` answers only from the cache (a miss raises
  `LMCacheMiss`), so a benchmark run can be replayed offline byte for byte; `"off"`.
* tools: `tool_mode="native"` sends `tools` and reads `message.tool_calls`; `"text"`
  states the tools in the system message and parses `<function=NAME><parameter=K>V
  </parameter></function>` from the reply (lib/lm/chat.py); `"auto"` tries native and falls
  back to text for good when the server rejects `tools` with HTTP 400.
"""
from __future__ import annotations

import abc
import dataclasses
import hashlib
import json
import math
import os
import random
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent import futures
from typing import Any

from lib.lm import chat


class LMError(RuntimeError):
    """Base class of the client's errors."""


class LMHTTPError(LMError):
    def __init__(self, message: str, status: int | None):
        super().__init__(message)
        self.status = status


class LMResponseError(LMError):
    """The server answered, but not with a usable completion."""


class LMCacheMiss(LMError):
    """`cache_mode="replay"` and the request is not in the cache."""


@dataclasses.dataclass
class TokenLogprob:
    token: str
    logprob: float
    top: list[tuple[str, float]]
    token_id: int | None = None


@dataclasses.dataclass
class Choice:
    index: int
    text: str
    tool_calls: list[dict]
    finish_reason: str
    logprobs: list[TokenLogprob] | None
    completion_tokens: int | None = None


@dataclasses.dataclass
class ChatResult:
    choices: list[Choice]
    model: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.choices]


def check_sampling_args(n: int, temperature: float, top_p: float, max_tokens: int,
                        top_logprobs: int) -> None:
    """ValueError before any request for arguments no server would accept."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n = {n!r} must be an int >= 1")
    if temperature < 0:
        raise ValueError(f"temperature = {temperature} must be >= 0")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p = {top_p} must be in (0, 1]")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens = {max_tokens!r} must be an int >= 1")
    if not 0 <= top_logprobs <= 20:
        raise ValueError(f"top_logprobs = {top_logprobs} must be in [0, 20]")


def option_probabilities(choice: Choice, options: Sequence[str]) -> dict[str, float]:
    """Probabilities of `options` as the first generated token, renormalised over them
    (SWE-Gym's verifier: p(YES) = e^{l_YES} / (e^{l_YES} + e^{l_NO})). Needs
    `logprobs=True, top_logprobs=k`; an option outside the top k gets probability 0, and
    ValueError is raised when none of them is there."""
    if not choice.logprobs:
        raise ValueError("the choice has no logprobs; request logprobs=True, top_logprobs>0")
    first = choice.logprobs[0]
    table = dict(first.top)
    table.setdefault(first.token, first.logprob)
    lps = {o: table.get(o, -math.inf) for o in options}
    finite = [v for v in lps.values() if v > -math.inf]
    if not finite:
        raise ValueError(f"none of {list(options)} is among the first token's top log-probs "
                         f"{sorted(table, key=table.get, reverse=True)}")
    m = max(finite)
    z = sum(math.exp(v - m) for v in finite)
    return {o: (math.exp(v - m) / z if v > -math.inf else 0.0) for o, v in lps.items()}


class LanguageModel(abc.ABC):
    """The interface every experiment takes; see the module docstring."""

    name: str = "model"

    @abc.abstractmethod
    def chat(self, messages: Sequence[dict], *, n: int = 1, temperature: float = 1.0,
             top_p: float = 1.0, max_tokens: int = 256, stop: Sequence[str] | None = None,
             logprobs: bool = False, top_logprobs: int = 0, tools: Sequence[dict] | None = None,
             seed: int | None = None) -> ChatResult:
        """`n` replies to a conversation."""

    @abc.abstractmethod
    def complete(self, prompt: str, *, n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 256, stop: Sequence[str] | None = None,
                 logprobs: bool = False, top_logprobs: int = 0,
                 seed: int | None = None) -> ChatResult:
        """`n` continuations of a raw prompt."""

    def chat_many(self, requests: Sequence[dict], max_workers: int = 1) -> list[ChatResult]:
        """`chat(**r)` for each request dict, in order (threads when max_workers > 1)."""
        if max_workers <= 1:
            return [self.chat(**r) for r in requests]
        with futures.ThreadPoolExecutor(max_workers) as pool:
            return list(pool.map(lambda r: self.chat(**r), requests))


# ----------------------------------------------------------------------------- response parsing


def _parse_chat_logprobs(obj: Any) -> list[TokenLogprob] | None:
    if not obj:
        return None
    content = obj.get("content") if isinstance(obj, dict) else None
    if content is None:
        return None
    return [TokenLogprob(t["token"], float(t["logprob"]),
                         [(a["token"], float(a["logprob"])) for a in t.get("top_logprobs") or []],
                         t.get("id")) for t in content]


def _parse_completion_logprobs(obj: Any) -> list[TokenLogprob] | None:
    if not obj:
        return None
    tops = obj.get("top_logprobs") or [None] * len(obj["tokens"])
    return [TokenLogprob(t, float(lp), sorted((top or {}).items(), key=lambda kv: -kv[1]))
            for t, lp, top in zip(obj["tokens"], obj["token_logprobs"], tops)]


def parse_response(data: Any, endpoint: str, text_tools: bool) -> ChatResult:
    """A `ChatResult` from an OpenAI-style JSON answer; LMResponseError when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        raise LMResponseError(f"response has no 'choices' list: {str(data)[:200]!r}")
    if not data["choices"]:
        raise LMResponseError("response has an empty 'choices' list")
    choices = []
    try:
        for i, c in enumerate(data["choices"]):
            if endpoint == "chat":
                msg = c["message"]
                text = msg.get("content") or ""
                calls = list(msg.get("tool_calls") or [])
                lps = _parse_chat_logprobs(c.get("logprobs"))
            else:
                text, calls = c["text"], []
                lps = _parse_completion_logprobs(c.get("logprobs"))
            if text_tools and not calls:
                text, calls = chat.parse_text_tool_calls(text)
            reason = c.get("finish_reason") or "stop"
            if calls and text_tools:
                reason = "tool_calls"
            choices.append(Choice(c.get("index", i), text, calls, reason, lps,
                                  len(lps) if lps is not None else None))
    except (KeyError, TypeError, ValueError) as e:
        raise LMResponseError(f"malformed choice in response ({type(e).__name__}: {e}): "
                              f"{str(data)[:200]!r}") from None
    usage = data.get("usage") or {}
    return ChatResult(choices, data.get("model", ""), usage.get("prompt_tokens"),
                      usage.get("completion_tokens"))


# ----------------------------------------------------------------------------- the client


class OpenAIClient(LanguageModel):
    """Client of an OpenAI-compatible server; see the module docstring for its behaviour."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 timeout_s: float = 120.0, max_retries: int = 4, backoff_s: float = 0.5,
                 max_backoff_s: float = 16.0, max_concurrency: int = 8,
                 cache_dir: str | None = None, cache_mode: str = "readwrite",
                 tool_mode: str = "auto"):
        if cache_mode not in ("readwrite", "replay", "off"):
            raise ValueError(f"cache_mode = {cache_mode!r}; expected readwrite, replay or off")
        if tool_mode not in ("auto", "native", "text"):
            raise ValueError(f"tool_mode = {tool_mode!r}; expected auto, native or text")
        if cache_mode == "replay" and not cache_dir:
            raise ValueError("cache_mode='replay' needs a cache_dir")
        if max_retries < 0 or max_concurrency < 1 or timeout_s <= 0:
            raise ValueError("max_retries >= 0, max_concurrency >= 1 and timeout_s > 0 required")
        self.base_url = base_url.rstrip("/")
        self.name = self.model = model
        self.api_key = api_key
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.cache_dir = cache_dir if cache_mode != "off" else None
        self.cache_mode = cache_mode
        self.tool_mode = tool_mode
        self._native_tools = tool_mode != "text"
        self.max_concurrency = max_concurrency
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._count_lock = threading.Lock()
        self.requests_sent = 0        # HTTP attempts, for tests and accounting
        self.max_in_flight = 0
        self._in_flight = 0

    # -------------------------------------------------------------------- cache
    @staticmethod
    def cache_key(endpoint: str, body: dict) -> str:
        blob = json.dumps({"endpoint": endpoint, "body": body}, sort_keys=True,
                          separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def _cache_path(self, key: str) -> str:
        return os.path.join(self.cache_dir, key[:2], key + ".json")

    def _cache_get(self, key: str) -> Any | None:
        if not self.cache_dir:
            return None
        path = self._cache_path(key)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    def _cache_put(self, key: str, data: Any) -> None:
        path = self._cache_path(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)

    # -------------------------------------------------------------------- HTTP
    def _sleep_before_retry(self, attempt: int) -> None:
        delay = min(self.backoff_s * 2 ** attempt, self.max_backoff_s)
        time.sleep(delay * (0.5 + random.random() / 2))

    def _http(self, path: str, body: dict) -> Any:
        """POST with retries; the parsed JSON answer."""
        url = self.base_url + path
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = "no attempt"
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep_before_retry(attempt - 1)
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            with self._slots:
                with self._count_lock:
                    self.requests_sent += 1
                    self._in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self._in_flight)
                try:
                    with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                        raw = resp.read()
                except urllib.error.HTTPError as e:
                    text = e.read()[:300].decode("utf-8", "replace")
                    if e.code == 429 or e.code >= 500:
                        last = f"HTTP {e.code}: {text}"
                        continue
                    raise LMHTTPError(f"{url} answered HTTP {e.code}: {text}", e.code) from None
                except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
                    last = f"{type(e).__name__}: {getattr(e, 'reason', e)}"
                    continue
                finally:
                    with self._count_lock:
                        self._in_flight -= 1
            try:
                return json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                last = f"malformed JSON: {raw[:200]!r}"
                continue
        raise LMResponseError(f"{url} failed after {self.max_retries + 1} attempts; last: {last}")

    def _request(self, endpoint: str, body: dict, text_tools: bool) -> ChatResult:
        key = self.cache_key(endpoint, body)
        cached = self._cache_get(key)
        if cached is not None:
            result = parse_response(cached, endpoint, text_tools)
            result.cached = True
            return result
        if self.cache_mode == "replay":
            raise LMCacheMiss(f"request {key[:12]} is not in the cache {self.cache_dir!r} "
                              "(cache_mode='replay' sends no requests)")
        path = "/chat/completions" if endpoint == "chat" else "/completions"
        for attempt in range(self.max_retries + 1):
            data = self._http(path, body)
            try:
                result = parse_response(data, endpoint, text_tools)
                break
            except LMResponseError:
                if attempt == self.max_retries:
                    raise
                self._sleep_before_retry(attempt)
        if self.cache_dir:
            self._cache_put(key, data)
        return result

    # -------------------------------------------------------------------- API
    def _body(self, n, temperature, top_p, max_tokens, stop, logprobs, top_logprobs, seed):
        body = {"model": self.model, "n": n, "temperature": temperature, "top_p": top_p,
                "max_tokens": max_tokens}
        if stop:
            body["stop"] = list(stop)
        if seed is not None:
            body["seed"] = seed
        return body, bool(logprobs or top_logprobs)

    def chat(self, messages: Sequence[dict], *, n: int = 1, temperature: float = 1.0,
             top_p: float = 1.0, max_tokens: int = 256, stop: Sequence[str] | None = None,
             logprobs: bool = False, top_logprobs: int = 0, tools: Sequence[dict] | None = None,
             seed: int | None = None) -> ChatResult:
        check_sampling_args(n, temperature, top_p, max_tokens, top_logprobs)
        messages = chat.check_messages(messages)
        body, want_lp = self._body(n, temperature, top_p, max_tokens, stop, logprobs,
                                   top_logprobs, seed)
        if want_lp:
            body["logprobs"] = True
            if top_logprobs:
                body["top_logprobs"] = top_logprobs
        if tools and self._native_tools:
            try:
                return self._request("chat", {**body, "messages": list(messages),
                                              "tools": list(tools)}, text_tools=False)
            except LMHTTPError as e:
                if self.tool_mode != "auto" or e.status != 400 or "tool" not in str(e).lower():
                    raise
                self._native_tools = False     # this server has no tool calling: use text
        if tools:
            messages = chat.messages_for_text_tools(messages, tools)
        return self._request("chat", {**body, "messages": list(messages)},
                             text_tools=bool(tools))

    def complete(self, prompt: str, *, n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 256, stop: Sequence[str] | None = None,
                 logprobs: bool = False, top_logprobs: int = 0,
                 seed: int | None = None) -> ChatResult:
        check_sampling_args(n, temperature, top_p, max_tokens, top_logprobs)
        body, want_lp = self._body(n, temperature, top_p, max_tokens, stop, logprobs,
                                   top_logprobs, seed)
        if want_lp:
            body["logprobs"] = max(top_logprobs, 1) if top_logprobs else 0
        return self._request("completion", {**body, "prompt": prompt}, text_tools=False)

    def chat_many(self, requests: Sequence[dict], max_workers: int | None = None) -> list[ChatResult]:
        """Concurrent `chat` calls; at most `max_concurrency` are on the wire at once."""
        return super().chat_many(requests, max_workers or 2 * self.max_concurrency)
