"""Shared pieces of the lm tests: a tiny model trained (once per process) to memorise a few
chat conversations, including a native tool call and a text-format tool call, saved as a
real training run (checkpoints + lm_model.json + tokenizer.json) that tools/serve_lm.py
serves; and a helper that starts that server on a loopback port."""
from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import jax

from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.lm import chat, sft
from lib.lm.model import LMConfig
from lib.lm.tokenizer import train_bpe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string",
                                                             "description": "city name"}}}}}
ASK_WEATHER = [{"role": "user", "content": "Weather in Paris?"}]
NATIVE_CALL = chat.make_tool_call("get_weather", {"city": "Paris"}, "call_0")
SAY_HI = [{"role": "user", "content": "Say hi"}]
HI_REPLY = "hi there, friend"
ADD = [{"role": "user", "content": "2+3"}]
ADD_REPLY = "=5"
STEPS = 90


def conversations() -> list[tuple[list[dict], list[dict] | None]]:
    """(messages, tools) pairs the fixture model memorises."""
    native = ASK_WEATHER + [{"role": "assistant", "content": None, "tool_calls": [NATIVE_CALL]}]
    text = chat.messages_for_text_tools(ASK_WEATHER, [WEATHER_TOOL]) + [
        {"role": "assistant", "content": chat.text_tool_call("get_weather", {"city": "Paris"})}]
    return [(native, [WEATHER_TOOL]), (text, None),
            (SAY_HI + [{"role": "assistant", "content": HI_REPLY}], None),
            (ADD + [{"role": "assistant", "content": ADD_REPLY}], None)]


@functools.cache
def trained_run() -> str:
    """Workdir of the memorising model (trained in ~10 s on 2 cores)."""
    workdir = tempfile.mkdtemp(prefix="lm_test_run_")
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    convs = conversations()
    texts = [chat.render_chat(m, tools=t, add_generation_prompt=False) for m, t in convs]
    tok = train_bpe(texts, 150)
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=64, num_layers=2, num_heads=4, d_ff=128,
                   max_len=160)
    examples = [sft.encode_conversation(tok, m, cfg.max_len, tools=t) for m, t in convs]
    width = max(len(e[0]) for e in examples)
    data = sft.pad_examples(examples * 2, width, tok.pad_id)       # 8 rows = one batch
    optim = dict(lr=1e-2, num_steps=STEPS, warmup_steps=10)
    sft.save_run_spec(workdir, cfg, tok, optim)
    task = sft.make_task(cfg, data, batch_size=8, **optim)
    mesh = mesh_lib.make_mesh(devices=jax.devices()[:1])     # tiny batch: no sharding overhead
    result = train_loop.train(task, train_loop.LoopConfig(num_steps=STEPS, log_every=STEPS,
                                                          checkpoint_every=STEPS),
                              workdir=workdir, mesh=mesh)
    jax.block_until_ready(result.state)
    return workdir


class ServerProcess:
    """`python tools/serve_lm.py` on a free loopback port; `.base_url`; `.stop()`."""

    def __init__(self, workdir: str, *extra: str, timeout_s: float = 120.0):
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tools", "serve_lm.py"), f"--workdir={workdir}",
             "--port=0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT, env=env)
        deadline = time.time() + timeout_s
        line = ""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"serve_lm.py exited: {self.proc.stderr.read()[-2000:]}")
            m = re.search(r"on (http://127\.0\.0\.1:\d+/v1)", line)
            if m:
                self.base_url = m.group(1)
                return
        self.stop()
        raise RuntimeError(f"serve_lm.py did not start within {timeout_s} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
