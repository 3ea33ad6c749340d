"""A burst of concurrent connections against lib/lm/server.py on loopback.

    python tools/bench/serve_lm_load.py                          # the working tree's server
    python tools/bench/serve_lm_load.py --servers=current,git:2773474~1 \\
        --readme=experiments/lm/README.md                        # before/after, spliced

For each server in --servers ("current": lib/lm/server.py as it is now; "git:REV": that
file as of commit REV, loaded from `git show` into a temporary module) and each of
--repeats bursts: the server is started in-process on 127.0.0.1, port 0, serving a fake
model (no network, no weights: it sleeps --gen_ms under a lock, so requests are generated
one at a time like the real model, and echoes the prompt). --connections client threads
wait on a barrier, then each opens its own connection at once and sends one
`POST /v1/chat/completions`. A connection counts as reset on ConnectionResetError
(including a disconnect before any answer), as failed on any other error, a timeout or a
status other than 200. Latency runs from connect to the last byte of the answer.

Writes --out (JSON, like the other tools/bench scripts under the git-ignored workdirs/)
and prints a markdown table; --readme splices it into the `serve_load` block. Only
127.0.0.1 is ever targeted (--host refuses anything else). Not a test: latencies depend on
the machine and its load (the load average is recorded).
"""
from __future__ import annotations

import http.client
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from lib.common import report                                    # noqa: E402
from lib.common import workdir as wd                              # noqa: E402
from lib.lm.client import ChatResult, Choice, LanguageModel       # noqa: E402

_SERVERS = flags.DEFINE_list("servers", ["current"],
                             "'current' and/or 'git:REV' (lib/lm/server.py at commit REV).")
_CONNECTIONS = flags.DEFINE_integer("connections", 200, "Concurrent connections per burst.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Bursts per server (a fresh server each).")
_GEN_MS = flags.DEFINE_float("gen_ms", 2.0, "Fake model: milliseconds per request (locked).")
_TIMEOUT = flags.DEFINE_float("timeout_s", 60.0, "Client timeout per connection (hang guard).")
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Only 127.0.0.1 is accepted.")
_OUT = flags.DEFINE_string("out", "workdirs/bench/serve_lm_load.json", "JSON output.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose `serve_load` block gets "
                              "the table.")

MAX_CONNECTIONS, MAX_REPEATS = 2000, 20


class FakeLM(LanguageModel):
    """Echoes the last message after `gen_ms` under a lock (one generation at a time)."""

    name = "fake"

    def __init__(self, gen_ms: float):
        self.gen_s, self._lock = gen_ms / 1000, threading.Lock()

    def chat(self, messages, *, n=1, **_):
        with self._lock:
            time.sleep(self.gen_s)
        return ChatResult([Choice(i, messages[-1]["content"], [], "stop", None)
                           for i in range(n)], self.name, 1, n)

    def complete(self, prompt, *, n=1, **kw):
        return self.chat([{"role": "user", "content": prompt}], n=n)


def load_make_server(spec: str):
    """`make_server` of the server named by `spec` ('current' or 'git:REV')."""
    if spec == "current":
        from lib.lm.server import make_server
        return make_server
    if not spec.startswith("git:") or len(spec) == 4:
        raise SystemExit(f"--servers entry {spec!r}: expected 'current' or 'git:REV'")
    rev = spec[4:]
    try:
        source = subprocess.run(["git", "show", f"{rev}:lib/lm/server.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"--servers entry {spec!r}: git show failed: "
                         f"{e.stderr.strip()}") from None
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="server_", delete=False) as f:
        f.write(source)
    try:
        module_spec = importlib.util.spec_from_file_location(f"lm_server_{rev}", f.name)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    finally:
        os.unlink(f.name)
    return module.make_server


def one_request(host: str, port: int, i: int, start: threading.Barrier, timeout_s: float,
                out: list) -> None:
    body = json.dumps({"model": "fake", "max_tokens": 8,
                       "messages": [{"role": "user", "content": f"m{i}"}]}).encode()
    start.wait()
    t0 = time.perf_counter()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
        try:
            conn.request("POST", "/v1/chat/completions", body,
                         {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        ok = resp.status == 200 and json.loads(data)["choices"][0]["message"]["content"] == f"m{i}"
        outcome = "ok" if ok else f"HTTP {resp.status}"
    except ConnectionResetError:           # http.client.RemoteDisconnected included
        outcome = "reset"
    except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
        outcome = type(e).__name__
    out[i] = (outcome, time.perf_counter() - t0)


def burst(make_server, host: str, connections: int, gen_ms: float, timeout_s: float) -> dict:
    """One burst against a fresh server: outcomes and latencies of every connection."""
    server = make_server(FakeLM(gen_ms), host, 0)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    out: list = [None] * connections
    start = threading.Barrier(connections + 1)
    clients = [threading.Thread(target=one_request, daemon=True,
                                args=(host, server.server_port, i, start, timeout_s, out))
               for i in range(connections)]
    for t in clients:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in clients:
        t.join(timeout_s + 5)
    wall = time.perf_counter() - t0
    server.shutdown()
    server.server_close()
    outcomes = [o[0] if o else "hung" for o in out]
    ok_lat = sorted(o[1] for o in out if o and o[0] == "ok")
    return {"reset": outcomes.count("reset"),
            "failed": sum(o not in ("ok", "reset") for o in outcomes),
            "failures": sorted({o for o in outcomes if o not in ("ok", "reset")}),
            "ok": outcomes.count("ok"), "latencies_s": ok_lat, "wall_s": wall}


def percentile(sorted_xs: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (NaN when empty)."""
    if not sorted_xs:
        return float("nan")
    rank = math.ceil(q * len(sorted_xs) / 100)
    return sorted_xs[min(len(sorted_xs), max(1, rank)) - 1]


def summarise(spec: str, bursts: list[dict]) -> dict:
    lat = sorted(x for b in bursts for x in b["latencies_s"])
    return {"server": spec, "bursts": len(bursts),
            "connections": sum(b["ok"] + b["reset"] + b["failed"] for b in bursts),
            "reset": sum(b["reset"] for b in bursts), "failed": sum(b["failed"] for b in bursts),
            "failures": sorted({f for b in bursts for f in b["failures"]}),
            "reset_per_burst": [b["reset"] for b in bursts],
            "p50_ms": 1000 * percentile(lat, 50), "p99_ms": 1000 * percentile(lat, 99),
            "max_ms": 1000 * lat[-1] if lat else float("nan"),
            "wall_s_median": statistics.median(b["wall_s"] for b in bursts)}


def table(res: dict) -> str:
    rows = ["| server | connections | reset | other failures | p50 ms | p99 ms | max ms | "
            "wall s (median burst) |", "|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        fails = f"{r['failed']}" + (f" ({', '.join(r['failures'])})" if r["failures"] else "")
        rows.append(f"| {r['server']} | {r['bursts']} × {res['connections']} | "
                    f"{r['reset']} ({'/'.join(map(str, r['reset_per_burst']))}) | {fails} | "
                    f"{r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['max_ms']:.0f} | "
                    f"{r['wall_s_median']:.2f} |")
    return ("\n".join(rows) + f"\n\nTarget: 0 resets, 0 failures. Fake model "
            f"({res['gen_ms']:g} ms per request, one at a time), one POST per connection, all "
            f"{res['connections']} connecting at once; latencies over the successful requests "
            f"of all bursts. Machine: {res['machine']}; load average {res['load_avg']}.")


def main(_):
    if _HOST.value != "127.0.0.1":
        raise SystemExit(f"--host={_HOST.value}: this benchmark only targets 127.0.0.1")
    if not 1 <= _CONNECTIONS.value <= MAX_CONNECTIONS or not 1 <= _REPEATS.value <= MAX_REPEATS:
        raise SystemExit(f"--connections in [1, {MAX_CONNECTIONS}] and --repeats in "
                         f"[1, {MAX_REPEATS}] required")
    if not 0 <= _GEN_MS.value <= 1000 or not 0 < _TIMEOUT.value <= 600:
        raise SystemExit("--gen_ms in [0, 1000] and --timeout_s in (0, 600] required")
    makers = {spec: load_make_server(spec) for spec in _SERVERS.value}
    runs = []
    for spec, make_server in makers.items():
        bursts = [burst(make_server, _HOST.value, _CONNECTIONS.value, _GEN_MS.value,
                        _TIMEOUT.value) for _ in range(_REPEATS.value)]
        runs.append(summarise(spec, bursts))
        print(f"{spec}: reset {runs[-1]['reset']}, failed {runs[-1]['failed']}", flush=True)
    res = {"runs": runs, "connections": _CONNECTIONS.value, "repeats": _REPEATS.value,
           "gen_ms": _GEN_MS.value, "machine": report.machine(),
           "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    os.makedirs(os.path.dirname(os.path.abspath(_OUT.value)), exist_ok=True)
    wd.write_json_atomic(_OUT.value, res)
    text = table(res)
    if _README.value:
        report.splice(_README.value, "serve_load", text)
    print(text)
    print(f"wrote {_OUT.value}")


if __name__ == "__main__":
    app.run(main)
