"""The client against tools/serve_lm.py over loopback HTTP (no mocks): n samples, logprobs,
tool calls (native and the text fallback), the cache, retries after HTTP 500, malformed JSON,
clear errors for bad requests, and the API key the served process requires."""
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from lib.lm import chat, sampling
from lib.lm.client import (
    LMCacheMiss,
    LMHTTPError,
    LMResponseError,
    OpenAIClient,
    option_probabilities,
)
from lib.lm.local import LocalLM
from lib.lm.server import make_server
from tests.lm import lm_helpers as h

MT = 24    # one max_tokens everywhere: fewer shapes, fewer compiles in the server
KEY = "test-key-0123"


@pytest.fixture(scope="module")
def run():
    return h.trained_run()


@pytest.fixture(scope="module")
def served(run, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("key") / "api_key.txt"
    key_file.write_text(KEY + "\n")
    server = h.ServerProcess(run, "--name=fixture", f"--api_key_file={key_file}")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def local(run):
    return LocalLM.from_workdir(run, name="fixture")


def client(served, **kw):
    kw.setdefault("max_retries", 0)
    kw.setdefault("cache_mode", "off")
    kw.setdefault("api_key", KEY)
    return OpenAIClient(served.base_url, "fixture", timeout_s=120, **kw)


def test_served_process_requires_its_api_key_and_its_model_name(served):
    with pytest.raises(LMHTTPError, match="HTTP 401.*API key") as e:
        client(served, api_key=None).chat(h.SAY_HI, temperature=0, max_tokens=MT)
    assert e.value.status == 401
    with pytest.raises(LMHTTPError, match="model_not_found") as e:
        OpenAIClient(served.base_url, "lm_test_run", api_key=KEY, max_retries=0,
                     cache_mode="off").chat(h.SAY_HI, temperature=0, max_tokens=MT)
    assert e.value.status == 404


def test_greedy_chat_and_n_samples_with_logprobs(served, local):
    c = client(served)
    greedy = c.chat(h.SAY_HI, temperature=0, max_tokens=MT)
    assert greedy.texts == [h.HI_REPLY] and greedy.choices[0].finish_reason == "stop"
    assert greedy.texts == local.chat(h.SAY_HI, temperature=0, max_tokens=MT).texts
    open_ended = [{"role": "user", "content": "zq"}]       # not memorised: diverse samples
    kw = dict(n=4, temperature=1.0, max_tokens=MT, logprobs=True, top_logprobs=3, seed=7)
    res = c.chat(open_ended, **kw)
    mine = local.chat(open_ended, **kw)                     # the same model in-process
    assert len(res.choices) == 4 and res.texts == mine.texts
    for ch, ref in zip(res.choices, mine.choices):
        assert "".join(t.token for t in ch.logprobs) == ch.text
        np.testing.assert_allclose([t.logprob for t in ch.logprobs],
                                   [t.logprob for t in ref.logprobs], atol=1e-6)
        ids = [t.token_id for t in ref.logprobs]
        np.testing.assert_allclose([t.logprob for t in ch.logprobs],
                                   sampling.score(local.cfg, local.params,
                                                  local.tok.encode(chat.render_chat(open_ended),
                                                                   allow_special=True), ids),
                                   atol=1e-4)
        for t in ch.logprobs:
            assert len(t.top) == 3 and t.top[0][1] >= t.logprob - 1e-6
    assert len(set(res.texts)) > 1


def test_same_seed_same_samples_and_completions_endpoint(served):
    c = client(served)
    open_ended = [{"role": "user", "content": "zq"}]
    a = c.chat(open_ended, n=4, temperature=1.0, max_tokens=MT, seed=3)
    b = c.chat(open_ended, n=4, temperature=1.0, max_tokens=MT, seed=3)
    other = c.chat(open_ended, n=4, temperature=1.0, max_tokens=MT, seed=4)
    assert a.texts == b.texts and a.texts != other.texts
    comp = c.complete(chat.render_chat(h.ADD), temperature=0, max_tokens=MT, logprobs=True,
                      top_logprobs=2, stop=["<|end|>"])
    assert comp.texts == [h.ADD_REPLY]
    assert comp.choices[0].logprobs[0].token == "="


def test_native_tool_call_round_trip(served):
    res = client(served, tool_mode="native").chat(h.ASK_WEATHER, tools=[h.WEATHER_TOOL],
                                                  temperature=0, max_tokens=MT)
    ch = res.choices[0]
    assert ch.finish_reason == "tool_calls"
    assert ch.tool_calls[0]["function"]["name"] == "get_weather"
    assert json.loads(ch.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}


def test_text_fallback_when_the_server_rejects_tools(run, local):
    server = make_server(local, native_tools=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        strict = OpenAIClient(url, "fixture", tool_mode="native", max_retries=0)
        with pytest.raises(LMHTTPError, match="does not support tools"):
            strict.chat(h.ASK_WEATHER, tools=[h.WEATHER_TOOL], temperature=0, max_tokens=MT)
        auto = OpenAIClient(url, "fixture", tool_mode="auto", max_retries=0)
        res = auto.chat(h.ASK_WEATHER, tools=[h.WEATHER_TOOL], temperature=0, max_tokens=MT)
        ch = res.choices[0]
        assert ch.finish_reason == "tool_calls", ch.text
        assert ch.tool_calls[0]["function"]["name"] == "get_weather"
        assert json.loads(ch.tool_calls[0]["function"]["arguments"]) == {"city": "Paris"}
        assert auto.requests_sent == 2      # one rejected native try, one text-format request
    finally:
        server.shutdown()
        server.server_close()


def test_cache_hit_makes_no_request_and_replays_offline(local, tmp_path):
    server = make_server(local)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        c = OpenAIClient(url, "fixture", cache_dir=str(tmp_path), max_retries=0)
        first = c.chat(h.SAY_HI, n=4, temperature=1.0, max_tokens=MT, seed=1, logprobs=True)
        assert c.requests_sent == 1 and not first.cached
    finally:
        server.shutdown()                   # nothing is listening any more
        server.server_close()
    again = c.chat(h.SAY_HI, n=4, temperature=1.0, max_tokens=MT, seed=1, logprobs=True)
    assert again.cached and again.texts == first.texts and c.requests_sent == 1
    replay = OpenAIClient(url, "fixture", cache_dir=str(tmp_path), cache_mode="replay")
    assert replay.chat(h.SAY_HI, n=4, temperature=1.0, max_tokens=MT, seed=1,
                       logprobs=True).texts == first.texts
    with pytest.raises(LMCacheMiss, match="not in the cache"):
        replay.chat(h.SAY_HI, n=4, temperature=1.0, max_tokens=MT, seed=2)
    assert replay.requests_sent == 0


class _Faulty:
    """A loopback server that answers the first `fail` requests with `status`/`body` and
    forwards the rest to the real server (fault injection in front of the real API)."""

    def __init__(self, upstream: str, fail: int, status: int = 500, body: bytes = b"oops"):
        self.count = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                data = self.rfile.read(int(self.headers["Content-Length"]))
                outer.count += 1
                if outer.count <= fail:
                    code, payload = status, body
                else:
                    req = urllib.request.Request(upstream + self.path[len("/v1"):], data=data,
                                                 headers={"Content-Type": "application/json",
                                                          "Authorization": f"Bearer {KEY}"})
                    with urllib.request.urlopen(req, timeout=120) as r:
                        code, payload = 200, r.read()
                self.send_response(code)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_http_500_is_retried_with_backoff(served):
    faulty = _Faulty(served.base_url, fail=2)
    try:
        c = OpenAIClient(faulty.url, "fixture", max_retries=3, backoff_s=0.01, api_key=KEY)
        assert c.chat(h.SAY_HI, temperature=0, max_tokens=MT).texts == [h.HI_REPLY]
        assert c.requests_sent == 3 and faulty.count == 3
        faulty.count = 0
        gives_up = OpenAIClient(faulty.url, "fixture", max_retries=1, backoff_s=0.01,
                                api_key=KEY)
        with pytest.raises(LMResponseError, match=r"failed after 2 attempts; last: HTTP 500"):
            gives_up.chat(h.SAY_HI, temperature=0, max_tokens=MT)
    finally:
        faulty.close()


@pytest.mark.parametrize("body", [b"{not json", b'{"choices": []}', b'{"object": "x"}'])
def test_malformed_answers_are_errors_never_empty_results(served, body):
    faulty = _Faulty(served.base_url, fail=100, status=200, body=body)
    try:
        c = OpenAIClient(faulty.url, "fixture", max_retries=1, backoff_s=0.01)
        with pytest.raises(LMResponseError, match="malformed JSON|empty 'choices'|no 'choices'"):
            c.chat(h.SAY_HI, temperature=0, max_tokens=MT)
        assert faulty.count == 2            # retried once
    finally:
        faulty.close()


def test_bad_requests_get_clear_errors(served):
    c = client(served)
    with pytest.raises(LMHTTPError, match="exceed the model's context of 160 tokens") as e:
        c.chat([{"role": "user", "content": "x" * 200}], max_tokens=MT)
    assert e.value.status == 400
    with pytest.raises(LMHTTPError, match=r"unknown special token '<\|usr\|>'"):
        c.chat([{"role": "user", "content": "<|usr|> hi"}], max_tokens=MT)
    with pytest.raises(ValueError, match="top_p"):
        c.chat(h.SAY_HI, top_p=0.0)
    req = urllib.request.Request(served.base_url + "/chat/completions", data=b"{oops",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {KEY}"})
    with pytest.raises(urllib.error.HTTPError) as raw:
        urllib.request.urlopen(req, timeout=30)
    assert raw.value.code == 400 and b"not JSON" in raw.value.read()


def test_concurrency_limit_and_verifier_probabilities(served):
    c = client(served, max_concurrency=2)
    results = c.chat_many([dict(messages=h.ADD, temperature=0, max_tokens=MT, logprobs=True,
                                top_logprobs=5)] * 6, max_workers=6)
    assert [r.texts[0] for r in results] == ["=5"] * 6
    assert c.max_in_flight <= 2
    probs = option_probabilities(results[0].choices[0], ["=", "x"])
    assert probs["="] > 0.5 and abs(sum(probs.values()) - 1) < 1e-9
