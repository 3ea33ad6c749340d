#!/usr/bin/env bash
# The MultiPDENet front on a GPU machine that cannot reach a package registry, in one call.
#
#   bash tools/bench/multipdenet_front_gpu.sh prepare        # here: wheels/ for the device (~60 MB)
#   bash tools/bench/multipdenet_front_gpu.sh run "$OUT"     # there (device tool, carry=["wheels"])
#
# `run` installs the carried wheels beside the machine's own JAX (no index, no dependencies
# pulled), generates the 30 held-out truth ICs on the GPU (256² DNS, seeds 2-4), runs the
# front with committed models (learned and classical points on the same ICs, not pinned:
# one GPU): the point the flagship's verdict rests on (front_64_dt8_pf_fd4_m8_nonets),
# a network model on 12x the data, the 64² FNO-corrected model and the paper's 32² corrector.
# It writes front_gpu.json/.md/.png and the logs into $OUT. Budget
# (estimated, not yet measured): under 8 minutes on an H100 (truth ~2 min, accuracies and
# timing ~4 min); it stops itself at 540 s.
# The CPU and GPU costs side by side: `python tools/bench/multipdenet_front.py --render
# --out=front_gpu.json --baseline=experiments/multipdenet/front.json` (cost ratio per point).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode="${1:-}"
case "$mode" in
  prepare)
    rm -rf wheels && mkdir wheels
    # pure-Python packages the workspace needs beyond what the device image ships (jax, numpy)
    # the device image runs Python 3.12 on x86_64
    python3 -m pip download -q --no-deps -d wheels --python-version 3.12 --only-binary=:all: \
      --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 flax optax chex orbax-checkpoint diffrax equinox \
      lineax optimistix jaxtyping wadler-lindig absl-py ml_collections jax-cfd msgpack tensorstore \
      treescope etils humanize simplejson nest-asyncio2 aiofiles protobuf rich markdown-it-py mdurl \
      toolz typing-extensions matplotlib contourpy cycler fonttools kiwisolver pyparsing python-dateutil \
      six pillow pyyaml   # scipy: not on the front's import path
    du -sh wheels ;;
  run)
    out="${2:?usage: run OUT_DIR}"
    mkdir -p "$out"
    python3 -m pip install -q --no-index --no-deps --find-links wheels wheels/*.whl >"$out/pip.log" 2>&1 || true
    python3 -c "import jax; print(jax.devices())" | tee "$out/devices.txt"
    T=experiments/multipdenet/trained
    timeout 540 bash -c "
      for s in 2 3 4; do python3 tools/make_pde_data.py --config=configs/pde_data/navier_stokes.py:heldout_\$s \
        --workdir=data/pde --noplot; done
      python3 tools/bench/multipdenet_front.py --cores= --out='$out/front_gpu.json' \
        --workdir=$T/front_64_dt8_pf_fd4_m8_nonets,$T/front_64_dt8_pf_fd4_m8_cnn_h2_large,$T/front_64_dt2,$T/front_32 --repeats=5
    " >"$out/front.log" 2>&1 || echo "front run stopped: see front.log" | tee -a "$out/front.log"
    tail -n 40 "$out/front.log" ;;
  *)
    echo "usage: $0 prepare | run OUT_DIR" >&2; exit 2 ;;
esac
