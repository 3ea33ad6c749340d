"""Where one FNO call of a MultiPDENet corrector spends its time, part by part.

    python tools/bench/fno_parts.py --variant=front_64_dt2 --batch=30 --repeats=9

Builds the corrector FNO of `--config:--variant` (`model.fno_*`, the coarse grid of its
dataset) with untrained parameters and times, in one pinned process (`tools/bench/pinning.py`),
jitted and compiled before timing, interleaved rounds (`front.interleaved_rounds`), median:

- the whole call, then its parts on their own: the lifting Dense,
  one Fourier layer (rfft2, mode mixing, irfft2, skip Dense, GELU), its FFT pair alone
  (channels-last as `lib/nn/fno.py` does it, and channels-first), its mode mixing alone,
  the projection (Dense → GELU → Dense), and GELU alone in flax's tanh form and the
  equal sigmoid form `x · σ(2√(2/π)(x + 0.044715x³))`;
- one macro step of the whole model and of its Physics Block alone (no networks).

Writes `--out` (JSON) and a markdown table beside it. Not a test.
"""
from __future__ import annotations

import os
import statistics
import sys

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lib.common.cli import run_tool
from lib.common import config as config_lib, report, workdir as wd
from lib.multipdenet import front, training
from lib.multipdenet.runs import setup
from lib.nn.fno import FNO, SpectralConv
from tools.bench import pinning

flags.DEFINE_string("config", "configs/multipdenet/navier_stokes.py", "MultiPDENet config file.")
flags.DEFINE_string("variant", "front_64_dt2", "Config variant.")
flags.DEFINE_integer("batch", 30, "Trajectories per call (the front's 30 held-out ICs).")
flags.DEFINE_integer("repeats", 9, "Interleaved timed rounds (median reported).", lower_bound=1)
flags.DEFINE_list("cores", [pinning.FIRST], "CPU cores to pin to before JAX starts (default: the first this process may use; empty: not pinned).")
flags.DEFINE_string("out", "workdirs/bench/fno_parts.json", "Output JSON (and .md beside it).")
FLAGS = flags.FLAGS
C = float(np.sqrt(2.0 / np.pi))


def cases(config, setup_) -> list[dict]:
    m, meta = config.model, setup_.metadata
    n = meta["coarse_grid"]
    key = jax.random.split(jax.random.key(0), 4)
    u = jax.random.normal(key[0], (FLAGS.batch, n, n, len(meta["fields"])))
    v = jax.random.normal(key[1], (FLAGS.batch, n, n, m.fno_width))
    h = jax.random.normal(key[2], (FLAGS.batch, n, n, m.fno_projection))
    fno = FNO(out_channels=u.shape[-1], modes=m.fno_modes, width=m.fno_width, depth=m.fno_depth,
              projection_width=m.fno_projection)
    p = fno.init(key[3], u)["params"]
    layer = p["spectral_0"]
    w_pos = jax.lax.complex(layer["w_pos_real"], layer["w_pos_imag"])
    k = m.fno_modes
    xh = jnp.fft.rfft2(v, axes=(1, 2))[:, :k, :k, :]
    dense = lambda x, d: x @ d["kernel"] + d["bias"]  # noqa: E731

    sc = SpectralConv(m.fno_width, k)
    sc_params = {"params": layer}
    model_params = setup_.emulator.init(key[3], u)
    physics_cfg = config_lib.apply_overrides(config, {"model.corrector": "none", "model.micro_net": "none",
                                                      "model.macro_net": "none"})
    physics = training.build_emulator(physics_cfg, setup_.metadata)
    phys_params = physics.init(key[3], u)
    return [
        dict(name="whole FNO call", fn=lambda a: fno.apply({"params": p}, a), arg=u),
        dict(name="lifting Dense", fn=lambda a: dense(a, p["lift"]), arg=u),
        dict(name="one Fourier layer (spectral + skip + GELU)",
             fn=lambda a: jax.nn.gelu(sc.apply(sc_params, a) + dense(a, p["skip_0"])), arg=v),
        dict(name="its SpectralConv", fn=lambda a: sc.apply(sc_params, a), arg=v),
        dict(name="its FFT pair, channels-last", arg=v,
             fn=lambda a: jnp.fft.irfft2(jnp.fft.rfft2(a, axes=(1, 2)), s=(n, n), axes=(1, 2))),
        dict(name="its FFT pair, channels-first", arg=jnp.moveaxis(v, -1, 1),
             fn=lambda a: jnp.fft.irfft2(jnp.fft.rfft2(a), s=(n, n))),
        dict(name="its mode mixing (one corner)", arg=xh,
             fn=lambda a: jnp.einsum("byxi,yxio->byxo", a, w_pos)),
        dict(name="projection (Dense, GELU, Dense)", arg=v,
             fn=lambda a: dense(jax.nn.gelu(dense(a, p["project_hidden"])), p["project_out"])),
        dict(name=f"GELU, tanh form, {m.fno_projection} channels", arg=h, fn=jax.nn.gelu),
        dict(name=f"GELU, sigmoid form, {m.fno_projection} channels", arg=h,
             fn=lambda a: a * jax.nn.sigmoid(2 * C * (a + 0.044715 * a * a * a))),
        dict(name="macro step, whole model", arg=u,
             fn=lambda a: setup_.emulator.rollout(model_params, a, 1)),
        dict(name="macro step, Physics Block only", arg=u,
             fn=lambda a: physics.rollout(phys_params, a, 1)),
    ]


def main(_):
    try:
        note = pinning.pin(pinning.parse(FLAGS.cores))
        config = config_lib.load_config(f"{FLAGS.config}:{FLAGS.variant}")
    except (ValueError, RuntimeError, config_lib.ConfigError) as e:
        sys.exit(f"fno_parts: {e}")
    built = setup(config, load_data=False)
    meta, rows = built.metadata, cases(config, built)
    for c in rows:
        c["compiled"] = jax.jit(lambda prm, a, f=c["fn"]: f(a)).lower({}, c["arg"]).compile()
        c["params"], c["u0"] = {}, c["arg"]
        jax.block_until_ready(c["compiled"]({}, c["arg"]))
    front.interleaved_rounds(rows, FLAGS.repeats)
    whole = statistics.median(rows[0]["times"])
    table = [{"part": c["name"], "ms": 1e3 * statistics.median(c["times"]),
              "fastest_ms": 1e3 * min(c["times"]), "of_whole_call": statistics.median(c["times"]) / whole}
             for c in rows]
    result = {"config": f"{FLAGS.config}:{FLAGS.variant}", "batch": FLAGS.batch, "grid": meta["coarse_grid"],
              "fno": {k: config.model[k] for k in ("fno_modes", "fno_width", "fno_depth", "fno_projection")},
              "repeats": FLAGS.repeats, "machine": report.machine(), "pinning": note,
              "load_average_end": os.getloadavg(), "rows": table}
    wd.write_json_atomic(FLAGS.out, result)
    md = [f"Config `{result['config']}` (FNO {result['fno']}), {FLAGS.batch} trajectories at "
          f"{meta['coarse_grid']}², median of {FLAGS.repeats} interleaved rounds; {note}; "
          f"{result['machine']}; load average at the end {result['load_average_end'][0]:.1f}.", "",
          "| part | ms (median) | fastest | × whole FNO call |", "|---|---|---|---|"]
    md += [f"| {r['part']} | {r['ms']:.2f} | {r['fastest_ms']:.2f} | {r['of_whole_call']:.2f} |" for r in table]
    with open(os.path.splitext(FLAGS.out)[0] + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    run_tool(main)
