#!/usr/bin/env bash
# MaxEntDP's multi-goal comparison at the official code's sizes (`official_full`) on a GPU
# machine, in one call; resumable across calls.
#
#   bash tools/bench/multipdenet_front_gpu.sh prepare        # here: wheels/ for the device (shared)
#   bash tools/bench/maxentdp_official_full_gpu.sh "$OUT"    # there (device tool, carry=["wheels"])
#
# On one CPU core a run needs more than 25 h per agent (experiments/maxentdp/README.md). There:
# MaxEntDP for at most 420 s of training (`run.time_budget_s`: it stops at a chunk boundary
# with a checkpoint), then SAC at the same settings (minutes), then, when both finished, the
# official_full_multigoal block (`tools/results.py`). $OUT gets the logs, both run folders
# (checkpoints included, a few MB) and results.md; a second call with the returned folders
# carried back (copy them to workdirs/maxentdp/, carry=["wheels", "workdirs/maxentdp"])
# resumes where the first stopped. VARIANT=tiny runs the same steps on the tiny config (a
# smoke test of this script on a CPU).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?usage: $0 OUT_DIR}"
variant="${VARIANT:-official_full}"
mkdir -p "$out"
if [ -d wheels ]; then
  python3 -m pip install -q --no-index --no-deps --find-links wheels wheels/*.whl >"$out/pip.log" 2>&1 || true
fi
python3 -c "import jax; print(jax.devices())" | tee "$out/devices.txt"
wd=workdirs/maxentdp/${variant}
status=0
timeout 560 bash -c "
  set -e
  python3 experiments/maxentdp/main.py --config=configs/maxentdp/maxentdp.py:$variant \
    --config.algos=\"('maxentdp',)\" --config.run.time_budget_s=420 --workdir=${wd}_maxentdp
  python3 experiments/maxentdp/main.py --config=configs/maxentdp/maxentdp.py:$variant \
    --config.algos=\"('sac',)\" --workdir=${wd}_sac
  python3 tools/results.py --paper=maxentdp --workdir=${wd}_maxentdp --merge=${wd}_sac \
    > '$out/results.md'
" >"$out/run.log" 2>&1 || status=$?
[ "$status" = 0 ] || echo "stopped before the end (exit $status): see run.log" | tee -a "$out/run.log"
for w in "${wd}_maxentdp" "${wd}_sac"; do [ -d "$w" ] && cp -r "$w" "$out/"; done
tail -n 30 "$out/run.log"
