#!/usr/bin/env bash
# MultiPDENet's data lever (12× the training data) on a GPU machine, in one call.
#
#   bash tools/bench/multipdenet_front_gpu.sh prepare     # here: wheels/ for the device (shared)
#   bash tools/bench/multipdenet_large_gpu.sh "$OUT"      # there (device tool, carry=["wheels"])
#
# On this repository's 2-core CPU machine the lever needs ~6 h of cores (measured: 115 s of a
# core per 256² training trajectory, 122 of them, 33 held-out truth trajectories, two
# trainings); a session cannot hold it. There, in order, each step resumable by the same
# command: the `front_train_64_large` data, the 30 held-out truth ICs (seeds 2-4), the two
# network forms trained on the large data (`front_64_dt8_pf_fd4_m8_{cnn_h2,cnn_tuned_h2}_large`),
# then the front with them beside the tuned FD4 point (`--families=fd4_tuned --grids=64
# --dt_factors=2.5`: the point the CPU network table is paired against) on the same ICs,
# written to $OUT/front_large_gpu.json/.md. The trained run folders come back in
# $OUT/trained/ (a few MB) so their HCT can be rechecked, and the cost timed, on the CPU. It
# stops itself at 540 s; what finished comes back.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: $0 OUT_DIR}"
mkdir -p "$out/trained"
if [ -d wheels ]; then
  python3 -m pip install -q --no-index --no-deps --find-links wheels wheels/*.whl >"$out/pip.log" 2>&1 || true
fi
python3 -c "import jax; print(jax.devices())" | tee "$out/devices.txt"
runs=""
for v in cnn_h2_large cnn_tuned_h2_large; do runs="$runs${runs:+,}workdirs/multipdenet/navier_stokes_front_64_dt8_pf_fd4_m8_$v"; done
timeout 540 bash -c "
  set -e
  python3 tools/make_pde_data.py --config=configs/pde_data/navier_stokes.py:front_train_64_large \
    --workdir=data/pde --noplot
  for s in 2 3 4; do python3 tools/make_pde_data.py --config=configs/pde_data/navier_stokes.py:heldout_\$s \
    --workdir=data/pde --noplot; done
  for v in cnn_h2_large cnn_tuned_h2_large; do
    python3 experiments/multipdenet/main.py --config=configs/multipdenet/navier_stokes.py:front_64_dt8_pf_fd4_m8_\$v \
      --workdir=workdirs/multipdenet/navier_stokes_front_64_dt8_pf_fd4_m8_\$v; done
  python3 tools/bench/multipdenet_front.py --cores= --out='$out/front_large_gpu.json' \
    --families=fd4_tuned --grids=64 --dt_factors=2.5 --workdir=$runs --repeats=3
" >"$out/large.log" 2>&1 || echo "stopped before the end: see large.log" | tee -a "$out/large.log"
for w in ${runs//,/ }; do [ -d "$w" ] && cp -r "$w" "$out/trained/"; done
tail -n 40 "$out/large.log"
