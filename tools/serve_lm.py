"""Serve a lib/lm training run through an OpenAI-compatible API on a loopback port.

    python tools/serve_lm.py --workdir=workdirs/lm_quick --port=8000
    # then: OpenAIClient("http://127.0.0.1:8000/v1", model="lm_quick")

Loads the newest checkpoint of the run (lm_model.json, tokenizer.json, checkpoints/),
prints `serving NAME on http://HOST:PORT/v1` once the socket is listening (port 0 picks
a free port; tests read this line), and serves /v1/chat/completions, /v1/completions,
/v1/models and /health until SIGINT/SIGTERM. It binds to loopback only unless
--allow_non_loopback is given. See lib/lm/server.py for the request and error formats.
"""
from __future__ import annotations

import ipaddress
import os
import signal
import sys
import threading

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.lm.local import LocalLM, load_run
from lib.lm.server import make_server

_WORKDIR = flags.DEFINE_string("workdir", None, "A lib/lm training run (experiments/lm).",
                               required=True)
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Address to bind.")
_PORT = flags.DEFINE_integer("port", 8000, "Port (0: any free port).")
_NAME = flags.DEFINE_string("name", None, "Model name reported (default: the workdir's name).")
_NO_TOOLS = flags.DEFINE_bool("no_native_tools", False,
                              "Reject `tools` with HTTP 400 (like servers without tool calling).")
_NO_CACHE = flags.DEFINE_bool("no_kv_cache", False, "Decode without the KV cache.")
_ALLOW = flags.DEFINE_bool("allow_non_loopback", False, "Permit binding a non-loopback address.")
_LOG = flags.DEFINE_bool("log_requests", False, "Log each HTTP request to stderr.")


def main(_):
    host = _HOST.value
    if not _ALLOW.value and not (host == "localhost" or ipaddress.ip_address(host).is_loopback):
        raise SystemExit(f"--host={host} is not a loopback address; pass --allow_non_loopback "
                         "to serve beyond this machine")
    cfg, params, tok, step = load_run(_WORKDIR.value)
    name = _NAME.value or os.path.basename(os.path.normpath(_WORKDIR.value))
    lm = LocalLM(cfg, params, tok, name=name, use_cache=not _NO_CACHE.value)
    server = make_server(lm, host, _PORT.value, native_tools=not _NO_TOOLS.value,
                         log=(lambda s: print(s, file=sys.stderr)) if _LOG.value else None)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"serving {name} (step {step}) on http://{host}:{server.server_port}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    app.run(main)
