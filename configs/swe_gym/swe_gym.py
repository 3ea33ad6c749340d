"""SWE-Gym on generated repositories: environment, agents, RFT, verifier, Pass@K / Best@K.

    python experiments/swe_gym/main.py --config=configs/swe_gym/swe_gym.py:quick \
        --workdir=workdirs/swe_gym_quick

Variants:
  tiny    3 repositories (1 held out), a few instances, a 2-layer LM trained for a few
          steps, 2 rollouts (tests / smoke; a couple of minutes).
  quick   30 repositories (6 held out), >= 200 validated instances, search baseline,
          a 0.1 M-parameter workspace LM pre-trained on 2,000 synthetic line repairs,
          a warm start on the search baseline's resolved trajectories of 80 training
          instances, 3 rounds of expert iteration (80 instances x 16 rollouts at T = 1),
          caps 1 / 2 / 3 / none, a YES/NO verifier, Pass@K / Best@K for K <= 16 on all
          held-out instances x 16 rollouts (CPU; the README's numbers).
  paper   SWE-Gym's scale where it can be: 11 x 10 repositories, ~2,400 instances, 30
          agent turns, 32k context, 16 rollouts, a 24-layer LM (for accelerators; not run).
A served model is evaluated too when --config.served.base_url=http://host:port/v1 and
--config.served.model=NAME are given (tools/serve_lm.py or vLLM / SGLang).
"""
import ml_collections

from lib.common.config import variant_config
from lib.swe_gym.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")


def _build(*, tag, repos, test_repos, per_repo, min_instances, search_turns, merges, d_model,
           layers, heads, d_ff, max_len, pre_n, pre_steps, pre_batch, rft_train, rft_rollouts,
           rft_min_steps, ver_min_steps, sc_test, sc_rollouts, ks, max_turns=30,
           max_context=32_000, batch=16, max_edits=3, ver_chars=1200, wall_s=10.0, rounds=2,
           warm_steps=100, temperature=1.0):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.data = dict(num_repos=repos, num_test_repos=test_repos, per_repo=per_repo,
                  kinds=("flip_comparison", "off_by_one", "dropped_branch", "wrong_default",
                         "swapped_arguments", "combination"),
                  themes_per_repo=3, funcs_per_theme=5, min_instances=min_instances)
    c.sandbox = dict(wall_s=wall_s, cpu_s=int(wall_s), memory_mb=1024)
    c.agent = dict(max_turns=max_turns, max_context=max_context, loop_window=3)
    c.search = dict(max_candidates=40, max_turns=search_turns)
    c.lm = dict(bpe_merges=merges, d_model=d_model, num_layers=layers, num_heads=heads, d_ff=d_ff,
                max_len=max_len, max_edits=max_edits, max_tokens=40)
    c.pretrain = dict(num_examples=pre_n, steps=pre_steps, batch_size=pre_batch, lr=2e-3)
    c.rft = dict(num_train=rft_train, rollouts=rft_rollouts, temperature=temperature,
                 caps=(1, 2, 3, 0), main_cap=2, epochs=3, min_steps=rft_min_steps,
                 batch_size=batch, lr=5e-4, rounds=rounds, pool=rft_rollouts, warm_start=True,
                 warm_steps=warm_steps)
    c.verifier = dict(cap_positive=2, epochs=3, min_steps=ver_min_steps, batch_size=batch,
                      lr=5e-4, max_chars=ver_chars)
    c.scaling = dict(num_test=sc_test, rollouts=sc_rollouts, ks=ks, temperature=0.7,
                     num_subsamples=100)
    c.served = dict(base_url="", model="", tool_mode="auto", cache_dir="", max_turns=max_turns)
    c.eval = dict(plots=True, target_gain=0.0)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="swe_gym_tiny", repos=3, test_repos=1, per_repo=2, min_instances=3,
            search_turns=6, merges=20, d_model=32, layers=1, heads=2, d_ff=64, max_len=384,
            pre_n=32, pre_steps=3, pre_batch=8, rft_train=2, rft_rollouts=2, rft_min_steps=2,
            ver_min_steps=2, sc_test=2, sc_rollouts=2, ks=(1, 2), batch=4),
        "quick": lambda: _build(
            tag="swe_gym_quick", repos=30, test_repos=6, per_repo=9, min_instances=200,
            search_turns=20, merges=300, d_model=64, layers=2, heads=4, d_ff=192,
            max_len=320, pre_n=2000, pre_steps=300, pre_batch=16, rft_train=80,
            rft_rollouts=16, rft_min_steps=60, rounds=3, ver_min_steps=80, sc_test=-1, sc_rollouts=16,
            ks=(1, 2, 4, 8, 16), max_edits=2, ver_chars=900),
        "paper": lambda: _build(
            tag="swe_gym_paper", repos=110, test_repos=20, per_repo=25, min_instances=2400,
            search_turns=30, merges=8000, d_model=1024, layers=24, heads=16, d_ff=4096,
            max_len=2048, pre_n=200_000, pre_steps=50_000, pre_batch=64, rft_train=-1,
            rft_rollouts=30, rft_min_steps=500, ver_min_steps=500, sc_test=-1,
            sc_rollouts=16, ks=(1, 2, 4, 8, 16), max_turns=100, wall_s=300.0),
    }, arg, default="quick")
