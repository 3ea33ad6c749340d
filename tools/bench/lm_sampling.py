"""Sampling throughput of the lib/lm transformer with and without the KV cache.

    python tools/bench/lm_sampling.py                                   # the quick model shape
    python tools/bench/lm_sampling.py --workdir=workdirs/lm_quick       # a trained run
    python tools/bench/lm_sampling.py --readme=experiments/lm/README.md # splice the table

For each decode length N in --new_tokens, `lib.lm.sampling.generate` produces N tokens for
a batch of --batch prompts of --prompt_len tokens (temperature 0, no stop tokens, so every
row generates exactly N tokens), once with the KV cache (one-token steps against the
cache, O(T) per step) and once without (each step recomputes the whole fixed-length buffer,
O(T²) per step). Times are the median of --repeats runs after a compile run; tokens/s counts
generated tokens of all rows. Writes --out (JSON) and prints a markdown table.
Not a test: the numbers depend on the machine and its load (the load average is recorded).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

import jax
import numpy as np
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lib.common.cli import run_tool
from lib.common import report
from lib.lm import model, sampling

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained lib/lm run (default: random init).")
_BATCH = flags.DEFINE_integer("batch", 8, "Prompts decoded together.")
_PROMPT = flags.DEFINE_integer("prompt_len", 16, "Prompt tokens.")
_NEW = flags.DEFINE_list("new_tokens", ["32", "128"], "Decode lengths.")
_REPEATS = flags.DEFINE_integer("repeats", 3, "Timed runs per setting (median).")
_OUT = flags.DEFINE_string("out", "workdirs/lm_bench/lm_sampling.json", "JSON output.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose `bench` block gets the table.")


def measure(cfg, params, batch: int, prompt_len: int, new: int, use_cache: bool,
            repeats: int) -> dict:
    rng = np.random.default_rng(0)
    prompts = rng.integers(0, cfg.vocab_size, (batch, prompt_len)).tolist()

    def once():
        out = sampling.generate(cfg, params, prompts, key=jax.random.key(0), max_tokens=new,
                                temperature=0.0, use_cache=use_cache)
        assert all(len(s[0].tokens) == new for s in out)

    t0 = time.perf_counter()
    once()
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        once()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {"new_tokens": new, "kv_cache": use_cache, "median_s": med,
            "tokens_per_s": batch * new / med, "first_run_s_incl_compile": compile_s}


def table(res: dict) -> str:
    rows = ["| new tokens | KV cache (tok/s) | no cache (tok/s) | speed-up |", "|---|---|---|---|"]
    by = {(r["new_tokens"], r["kv_cache"]): r for r in res["runs"]}
    for n in sorted({r["new_tokens"] for r in res["runs"]}):
        c, u = by[(n, True)], by[(n, False)]
        rows.append(f"| {n} | {c['tokens_per_s']:.0f} | {u['tokens_per_s']:.0f} | "
                    f"{c['tokens_per_s'] / u['tokens_per_s']:.1f}× |")
    m = res["model"]
    return ("\n".join(rows) + f"\n\nModel: {m['num_layers']} layers × width {m['d_model']}, "
            f"{res['num_params']:,} parameters ({res['params']}); batch {res['batch']}, prompt "
            f"{res['prompt_len']} tokens, greedy; median of {res['repeats']} runs after "
            f"compilation. Machine: {res['machine']}; load average {res['load_avg']}.")


def main(_):
    new = [int(n) for n in _NEW.value]
    if _WORKDIR.value:
        from lib.lm.local import load_run
        cfg, params, _, _ = load_run(_WORKDIR.value)
        source = f"trained, {_WORKDIR.value}"
    else:
        cfg = model.LMConfig(vocab_size=266, d_model=128, num_layers=4, num_heads=4, d_ff=512,
                             max_len=_PROMPT.value + max(new))
        params = model.init_params(cfg, jax.random.key(0))
        source = "random init, the quick variant's shape"
    if _PROMPT.value + max(new) > cfg.max_len:
        raise SystemExit(f"prompt_len + max(new_tokens) = {_PROMPT.value + max(new)} exceeds the "
                         f"model context {cfg.max_len}")
    runs = [measure(cfg, params, _BATCH.value, _PROMPT.value, n, c, _REPEATS.value)
            for n in new for c in (True, False)]
    import dataclasses
    res = {"runs": runs, "model": dataclasses.asdict(cfg), "num_params": model.num_params(params),
           "params": source, "batch": _BATCH.value, "prompt_len": _PROMPT.value,
           "repeats": _REPEATS.value, "machine": report.machine(),
           "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    os.makedirs(os.path.dirname(os.path.abspath(_OUT.value)), exist_ok=True)
    with open(_OUT.value, "w") as f:
        json.dump(res, f, indent=2)
    text = table(res)
    if _README.value:
        report.splice(_README.value, "bench", text)
    print(text)


if __name__ == "__main__":
    run_tool(main)
