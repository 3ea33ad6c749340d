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
from lib.common.config import variant_config
from lib.swe_gym.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "swe_gym_tiny", "data.num_repos": 3, "data.num_test_repos": 1,
             "data.per_repo": 2, "data.min_instances": 3, "search.max_turns": 6,
             "lm.bpe_merges": 20, "lm.d_model": 32, "lm.num_layers": 1, "lm.num_heads": 2,
             "lm.d_ff": 64, "lm.max_len": 384, "pretrain.num_examples": 32, "pretrain.steps": 3,
             "pretrain.batch_size": 8, "rft.num_train": 2, "rft.rollouts": 2, "rft.min_steps": 2,
             "rft.batch_size": 4, "rft.pool": 2, "verifier.min_steps": 2,
             "verifier.batch_size": 4, "scaling.num_test": 2, "scaling.rollouts": 2,
             "scaling.ks": (1, 2)}),
        "quick": lambda: config(
            {"tag": "swe_gym_quick", "data.num_repos": 30, "data.num_test_repos": 6,
             "data.per_repo": 9, "data.min_instances": 200, "search.max_turns": 20,
             "lm.bpe_merges": 300, "lm.d_model": 64, "lm.num_layers": 2, "lm.num_heads": 4,
             "lm.d_ff": 192, "lm.max_len": 320, "lm.max_edits": 2, "pretrain.num_examples": 2000,
             "pretrain.steps": 300, "pretrain.batch_size": 16, "rft.num_train": 80,
             "rft.rollouts": 16, "rft.min_steps": 60, "rft.rounds": 3, "rft.pool": 16,
             "verifier.min_steps": 80, "verifier.max_chars": 900}),
        "paper": lambda: config(
            {"tag": "swe_gym_paper", "data.num_repos": 110, "data.num_test_repos": 20,
             "data.per_repo": 25, "data.min_instances": 2400, "sandbox.wall_s": 300.0,
             "sandbox.cpu_s": 300, "agent.max_turns": 100, "search.max_turns": 30,
             "lm.bpe_merges": 8000, "lm.d_model": 1024, "lm.num_layers": 24, "lm.num_heads": 16,
             "lm.d_ff": 4096, "lm.max_len": 2048, "pretrain.num_examples": 200_000,
             "pretrain.steps": 50_000, "pretrain.batch_size": 64, "rft.num_train": -1,
             "rft.rollouts": 30, "rft.min_steps": 500, "rft.pool": 30, "verifier.min_steps": 500,
             "served.max_turns": 100}),
    }, arg, default="quick")
