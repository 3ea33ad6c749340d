"""A burst of concurrent connections, then slow and idle clients, against lib/lm/server.py
on loopback.

    python tools/bench/serve_lm_load.py                          # the working tree's server
    python tools/bench/serve_lm_load.py --servers=current,git:4f6ca94 \\
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

Then two phases per server (--phases), each against a fresh server:
* slowloris: --slow_connections connections each send the start of a request head, then
  one more byte every --slow_interval_s; one the server closes is replaced by a new one;
* idle: --idle_connections connections that send nothing.
While the attackers hold their connections, --probes normal requests (one at a time,
--probe_every_s apart, each on a new connection, timing out at --probe_timeout_s) are
timed; target: every probe answered 200 in under 2 s. The slowloris row also gives how
long the server let a slow connection live (median, from its first byte).

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
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from absl import flags

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from lib.common.cli import run_tool
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
_PHASES = flags.DEFINE_list("phases", ["burst", "slowloris", "idle"],
                            "Which of burst, slowloris, idle to run.")
_SLOW = flags.DEFINE_integer("slow_connections", 300, "Slowloris connections held at once.")
_SLOW_INTERVAL = flags.DEFINE_float("slow_interval_s", 5.0,
                                    "Seconds between two bytes of a slowloris connection.")
_IDLE = flags.DEFINE_integer("idle_connections", 1024, "Idle connections held at once.")
_PROBES = flags.DEFINE_integer("probes", 5, "Normal requests timed during each phase.")
_PROBE_EVERY = flags.DEFINE_float("probe_every_s", 2.0, "Seconds from one probe's start "
                                  "to the next.")
_PROBE_TIMEOUT = flags.DEFINE_float("probe_timeout_s", 20.0, "A probe's client timeout.")
_SLOW_HOLD = flags.DEFINE_float("slow_hold_s", 16.0, "The slowloris phase lasts at least "
                                "this long after its first probe.")

MAX_CONNECTIONS, MAX_REPEATS = 2000, 20
MAX_HELD, MAX_PROBES = 4096, 50       # attacker connections, probes per phase
TARGET_S = 2.0                        # a probe must be answered within this


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


def timed_request(host: str, port: int, i: int, timeout_s: float) -> tuple[str, float]:
    """(outcome, seconds) of one chat POST on a new connection: "ok", "reset", "HTTP <status>"
    or the exception's name; seconds from connect to the last byte of the answer."""
    body = json.dumps({"model": "fake", "max_tokens": 8,
                       "messages": [{"role": "user", "content": f"m{i}"}]}).encode()
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
    return outcome, time.perf_counter() - t0


def one_request(host: str, port: int, i: int, start: threading.Barrier, timeout_s: float,
                out: list) -> None:
    start.wait()
    out[i] = timed_request(host, port, i, timeout_s)


def burst(make_server, host: str, connections: int, gen_ms: float, timeout_s: float) -> dict:
    """One burst against a fresh server: outcomes and latencies of every connection."""
    server = start_server(make_server, host, gen_ms)
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
    stop_server(server)
    outcomes = [o[0] if o else "hung" for o in out]
    ok_lat = sorted(o[1] for o in out if o and o[0] == "ok")
    return {"reset": outcomes.count("reset"),
            "failed": sum(o not in ("ok", "reset") for o in outcomes),
            "failures": sorted({o for o in outcomes if o not in ("ok", "reset")}),
            "ok": outcomes.count("ok"), "latencies_s": ok_lat, "wall_s": wall}


def start_server(make_server, host: str, gen_ms: float):
    server = make_server(FakeLM(gen_ms), host, 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


def stop_server(server) -> None:
    server.shutdown()
    server.server_close()


class Attackers:
    """`count` connections held open until `stop`: idle (`interval_s` None: nothing sent) or
    slowloris (the start of a request head, then one byte every `interval_s`, on a thread;
    a connection the server closes is replaced). Records each slow connection's life from
    its first byte to the moment the server closed it (seen within 0.2 s)."""

    HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "

    def __init__(self, host: str, port: int, count: int, interval_s: float | None):
        self.addr, self.interval_s = (host, port), interval_s
        self.born: dict = {}                     # socket -> time of its first byte
        self.lives: list[float] = []
        self.refused = 0                         # connects that failed
        self._sel = selectors.DefaultSelector()
        for _ in range(count):
            self._open()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if interval_s is not None:
            self._thread.start()

    def _open(self) -> None:
        try:
            s = socket.create_connection(self.addr, timeout=5)
            if self.interval_s is not None:
                s.sendall(self.HEAD)
            s.setblocking(False)
        except OSError:
            self.refused += 1
            return
        self.born[s] = time.monotonic()
        self._sel.register(s, selectors.EVENT_READ)

    def _closed(self, s) -> None:
        self.lives.append(time.monotonic() - self.born.pop(s))
        self._sel.unregister(s)
        s.close()

    def _run(self) -> None:
        next_send = time.monotonic() + self.interval_s
        while not self._stop.is_set():
            for key, _ in self._sel.select(min(0.2, max(0.0, next_send - time.monotonic()))):
                self._closed(key.fileobj)        # an answer (408) or the end: cut
                self._open()
            if time.monotonic() >= next_send:
                next_send += self.interval_s
                for s in list(self.born):
                    try:
                        s.send(b"y")
                    except BlockingIOError:
                        pass
                    except OSError:
                        self._closed(s)
                        self._open()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        for s in self.born:
            s.close()
        self._sel.close()


def phase(make_server, host: str, kind: str, gen_ms: float) -> dict:
    """Probes timed while `kind` ("slowloris" or "idle") attackers hold connections."""
    server = start_server(make_server, host, gen_ms)
    slow = kind == "slowloris"
    attackers = Attackers(host, server.server_port, _SLOW.value if slow else _IDLE.value,
                          _SLOW_INTERVAL.value if slow else None)
    time.sleep(1.0)                          # the server has taken every connection
    probes = []
    t0 = time.monotonic()
    for i in range(_PROBES.value):
        time.sleep(max(0.0, t0 + i * _PROBE_EVERY.value - time.monotonic()))
        probes.append(timed_request(host, server.server_port, i, _PROBE_TIMEOUT.value))
    if slow:                                 # long enough to see the read deadline act
        time.sleep(max(0.0, t0 + _SLOW_HOLD.value - time.monotonic()))
    attackers.stop()
    stop_server(server)
    lat = [p[1] for p in probes if p[0] == "ok"]
    return {"phase": kind, "attackers": _SLOW.value if slow else _IDLE.value,
            "refused_connects": attackers.refused,
            "probes": len(probes), "ok": len(lat),
            "ok_under_target": sum(x < TARGET_S for x in lat),
            "failures": sorted({p[0] for p in probes if p[0] != "ok"}),
            "probe_s": [p[1] for p in probes],
            "slow_cut": len(attackers.lives),
            "slow_life_s_median": statistics.median(attackers.lives) if attackers.lives else None}


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


def phase_table(res: dict) -> str:
    rows = ["| server | phase | attacker connections | probes answered 200 in < 2 s | "
            "probe s (each) | failures | slow conn. cut (median life s) |",
            "|---|---|---|---|---|---|---|"]
    for r in res["phases"]:
        life = (f"{r['slow_cut']} ({r['slow_life_s_median']:.1f})" if r["slow_cut"] else
                ("0" if r["phase"] == "slowloris" else "-"))
        rows.append(f"| {r['server']} | {r['phase']} | {r['attackers']} | "
                    f"{r['ok_under_target']} / {r['probes']} | "
                    f"{' '.join(f'{x:.2f}' for x in r['probe_s'])} | "
                    f"{', '.join(r['failures']) or '0'} | {life} |")
    return ("\n".join(rows) + f"\n\nTarget: every probe answered 200 in under {TARGET_S:g} s. "
            f"slowloris: {res['slow_connections']} connections, each sending one byte every "
            f"{res['slow_interval_s']:g} s (one the server closes is replaced); idle: "
            f"{res['idle_connections']} connections sending nothing; {res['probes']} probes "
            f"{res['probe_every_s']:g} s apart, client timeout {res['probe_timeout_s']:g} s.")


def table(res: dict) -> str:
    parts = []
    if res["runs"]:
        parts.append(burst_table(res))
    if res["phases"]:
        parts.append(phase_table(res))
    return "\n\n".join(parts) + f"\n\nMachine: {res['machine']}."


def burst_table(res: dict) -> str:
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
            f"of all bursts.")


def main(_):
    if _HOST.value != "127.0.0.1":
        raise SystemExit(f"--host={_HOST.value}: this benchmark only targets 127.0.0.1")
    if not 1 <= _CONNECTIONS.value <= MAX_CONNECTIONS or not 1 <= _REPEATS.value <= MAX_REPEATS:
        raise SystemExit(f"--connections in [1, {MAX_CONNECTIONS}] and --repeats in "
                         f"[1, {MAX_REPEATS}] required")
    if not 0 <= _GEN_MS.value <= 1000 or not 0 < _TIMEOUT.value <= 600:
        raise SystemExit("--gen_ms in [0, 1000] and --timeout_s in (0, 600] required")
    unknown = set(_PHASES.value) - {"burst", "slowloris", "idle"}
    if unknown:
        raise SystemExit(f"--phases: unknown {sorted(unknown)}; choose from burst, slowloris, idle")
    if not (0 <= _SLOW.value <= MAX_HELD and 0 <= _IDLE.value <= MAX_HELD
            and 1 <= _PROBES.value <= MAX_PROBES and 0.1 <= _SLOW_INTERVAL.value <= 60
            and 0 <= _PROBE_EVERY.value <= 60 and 0 < _PROBE_TIMEOUT.value <= 120
            and 0 <= _SLOW_HOLD.value <= 120):
        raise SystemExit(f"--slow_connections and --idle_connections in [0, {MAX_HELD}], "
                         f"--probes in [1, {MAX_PROBES}], --slow_interval_s in [0.1, 60], "
                         "--probe_every_s in [0, 60], --probe_timeout_s in (0, 120], "
                         "--slow_hold_s in [0, 120] required")
    makers = {spec: load_make_server(spec) for spec in _SERVERS.value}
    runs, phases = [], []
    for spec, make_server in makers.items():
        if "burst" in _PHASES.value:
            bursts = [burst(make_server, _HOST.value, _CONNECTIONS.value, _GEN_MS.value,
                            _TIMEOUT.value) for _ in range(_REPEATS.value)]
            runs.append(summarise(spec, bursts))
            print(f"{spec}: reset {runs[-1]['reset']}, failed {runs[-1]['failed']}", flush=True)
        for kind in ("slowloris", "idle"):
            if kind in _PHASES.value:
                phases.append({"server": spec, **phase(make_server, _HOST.value, kind,
                                                       _GEN_MS.value)})
                print(f"{spec} {kind}: probes (s) "
                      f"{[round(x, 2) for x in phases[-1]['probe_s']]}, failures "
                      f"{phases[-1]['failures']}", flush=True)
    res = {"runs": runs, "phases": phases, "connections": _CONNECTIONS.value,
           "repeats": _REPEATS.value, "gen_ms": _GEN_MS.value,
           "slow_connections": _SLOW.value, "slow_interval_s": _SLOW_INTERVAL.value,
           "idle_connections": _IDLE.value, "probes": _PROBES.value,
           "probe_every_s": _PROBE_EVERY.value, "probe_timeout_s": _PROBE_TIMEOUT.value,
           "machine": report.machine(),
           "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    os.makedirs(os.path.dirname(os.path.abspath(_OUT.value)), exist_ok=True)
    wd.write_json_atomic(_OUT.value, res)
    text = table(res)
    if _README.value:
        report.splice(_README.value, "serve_load", text)
    print(text)
    print(f"wrote {_OUT.value}")


if __name__ == "__main__":
    run_tool(main)
