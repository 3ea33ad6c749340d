"""Serve a lib/lm training run through an OpenAI-compatible API on a loopback port.

    python tools/serve_lm.py --workdir=workdirs/lm_quick --port=8000
    # then: OpenAIClient("http://127.0.0.1:8000/v1", model="lm_quick")

Loads the newest checkpoint of the run (lm_model.json, tokenizer.json, checkpoints/),
prints `serving NAME on http://HOST:PORT/v1` once the socket is listening (port 0 picks
a free port; tests read this line), and serves /v1/chat/completions, /v1/completions,
/v1/models and /health until SIGINT/SIGTERM. It binds to loopback only unless
--allow_non_loopback is given. See lib/lm/server.py for the request and error formats.

    python tools/serve_lm.py --workdir=... --api_key_file=key.txt   # 401 without the key
    # client: OpenAIClient(url, model=NAME, api_key=open("key.txt").read().strip())

--api_key (or --api_key_file, which keeps the key out of the process list) makes every
/v1/... request need `Authorization: Bearer <key>`. --aliases adds names a request's
`model` may use (any other name gets 404 model_not_found). --read_timeout_s drops a
connection whose request has not fully arrived in time; --max_workers threads serve at
most that many connections at once, --max_pending more wait (beyond: 503).
"""
from __future__ import annotations

import ipaddress
import os
import signal
import sys
import threading

from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common.cli import run_tool
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
_ALIASES = flags.DEFINE_list("aliases", [], "More model names requests may use.")
_API_KEY = flags.DEFINE_string("api_key", None, "Require `Authorization: Bearer KEY`.")
_API_KEY_FILE = flags.DEFINE_string("api_key_file", None,
                                    "A file holding the API key (stripped of whitespace).")
_READ_TIMEOUT = flags.DEFINE_float("read_timeout_s", 10.0,
                                   "Seconds a request (line, headers, body) may take to arrive.")
_WORKERS = flags.DEFINE_integer("max_workers", 64, "Connections served at once (threads).")
_PENDING = flags.DEFINE_integer("max_pending", 1024, "Accepted connections that may wait.")


def api_key() -> str | None:
    """The key from --api_key or --api_key_file (SystemExit naming the problem)."""
    if _API_KEY.value is not None and _API_KEY_FILE.value is not None:
        raise SystemExit("give --api_key or --api_key_file, not both")
    if _API_KEY_FILE.value is not None:
        try:
            with open(_API_KEY_FILE.value) as f:
                key = f.read().strip()
        except OSError as e:
            raise SystemExit(f"--api_key_file={_API_KEY_FILE.value}: {e.strerror}") from None
        if not key:
            raise SystemExit(f"--api_key_file={_API_KEY_FILE.value} is empty")
        return key
    if _API_KEY.value is not None and not _API_KEY.value.strip():
        raise SystemExit("--api_key is empty")
    return _API_KEY.value.strip() if _API_KEY.value is not None else None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:              # a host name other than localhost
        return False


def main(_):
    host = _HOST.value
    if not _ALLOW.value and not is_loopback(host):
        raise SystemExit(f"--host={host} is not a loopback address; pass --allow_non_loopback "
                         "to serve beyond this machine")
    key = api_key()
    if _READ_TIMEOUT.value <= 0 or _WORKERS.value < 1 or _PENDING.value < 1:
        raise SystemExit("--read_timeout_s > 0, --max_workers >= 1 and --max_pending >= 1 "
                         "required")
    from lib.lm.local import LocalLM, load_run     # JAX: only once the flags are checked
    cfg, params, tok, step = load_run(_WORKDIR.value)
    name = _NAME.value or os.path.basename(os.path.normpath(_WORKDIR.value))
    lm = LocalLM(cfg, params, tok, name=name, use_cache=not _NO_CACHE.value)
    names = [name] + [a for a in _ALIASES.value if a != name]
    server = make_server(lm, host, _PORT.value, native_tools=not _NO_TOOLS.value,
                         log=(lambda s: print(s, file=sys.stderr)) if _LOG.value else None,
                         model_names=names, api_key=key, read_timeout_s=_READ_TIMEOUT.value,
                         max_workers=_WORKERS.value, max_pending=_PENDING.value)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    auth = "API key required" if key else "no API key"
    print(f"serving {name} (step {step}) on http://{host}:{server.server_port}/v1 ({auth})",
          flush=True)
    if key is None and not is_loopback(host):
        print("warning: serving beyond loopback without --api_key", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    run_tool(main)
