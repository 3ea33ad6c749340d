r"""Adam under L-smoothness and the ABC inequality (Jin, Li, Yu & Wang, ICML 2025): numbers.

    python experiments/adam_abc/main.py --config=configs/adam_abc/adam_abc.py:quick \
        --workdir=workdirs/adam_abc_quick
    python experiments/adam_abc/main.py --config=configs/adam_abc/adam_abc.py:quick \
        --config.parts="('rate',)" --config.rate.settings="('quadratic-student_t',)"

Runs 1,024 independent Adam / SGD trajectories per setting (vmapped, sharded over the
"data" mesh axis), measures the rate of min_t and avg_t E‖∇f(θ_t)‖² against the horizon
T, the last-iterate L1 / almost-sure behaviour under Robbins–Monro schedules, and the
negative controls; writes results.json, results.md (tables) and plots/ to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.adam_abc.train:train_and_evaluate")  # imported after flag parsing
