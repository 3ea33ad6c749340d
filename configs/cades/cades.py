"""CADES: conformal anomaly detection in event sequences (Zhang et al., ICML 2025).

    python experiments/cades/main.py --config=configs/cades/cades.py:quick --workdir=workdirs/cades_quick

Variants:
  tiny    1 SPP family, server_stop, 2 seeds, a few dozen sequences, 30 neural steps, FPR
          over 20 splits (tests; under a minute).
  quick   the 9 SPP families (T = 100, η ∈ {0, 0.25, 0.5, 0.75}, 3 seeds, 200 calibration /
          100 ID test / 100 OOD sequences), server stop/overload and latency on a shorter
          window (T = 30, about 270 events) with a Hawkes MLE and a neural TPP fitted on 100
          sequences, FPR over 1,000 calibration/test splits (400 / 100 sequences) per setting
          at α ∈ {0.01, 0.05, 0.1}. The README's numbers (sized for a shared 2-core CPU).
  paper   the paper's scale: η grid of 20 points, 10 seeds, 1,000 ID and OOD sequences,
          neural TPP trained on 500 sequences for longer (accelerator; not run here).
  official the official experiments/spp.py set-up, SPP part only (it trains nothing): its
          nine families (with its comb `uniform_official` and capped
          `inhomogeneous_official`), η ∈ {0, 0.05, …, 0.95} (20 values), 1,000 calibration,
          1,000 ID test and 1,000 OOD sequences per η, 3 seeds, every baseline (KS, 3S, χ²,
          Q±). Hawkes at η = 0.95 had more than 1,536 events in one window of
          1,000 (measured), so that family gets 2,048 slots.
"""
import ml_collections

from lib.cades.config_schema import validate  # noqa: F401  (used by the config test)
from lib.cades.scenarios import MULTIVARIATE, OFFICIAL_SPP_FAMILIES, SPP_FAMILIES
from lib.common.config import mesh_block, train_block, variant_config

VARIANTS = ("tiny", "quick", "paper", "official")


def _build(*, tag, families, spp_etas, spp_n_cal, spp_n_test, spp_seeds, spp_max_len,
           scenarios, mv_etas, n_train, mv_n_cal, mv_n_test, mv_seeds, mv_max_len, hawkes_steps,
           neural_steps, hidden, batch_size, fpr_settings, fpr_n_cal, fpr_n_test, fpr_blocks,
           fpr_reps, fpr_block_size, mv_t_max=100.0, chunk=256, parts=("spp", "multivariate", "fpr"),
           spp_max_len_hawkes=None):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = tuple(parts)
    c.spp = dict(families=tuple(families), t_max=100.0, max_len=spp_max_len,
                 max_len_hawkes=spp_max_len_hawkes or spp_max_len, etas=tuple(spp_etas),
                 n_cal=spp_n_cal, n_test=spp_n_test, num_seeds=spp_seeds)
    c.multivariate = dict(scenarios=tuple(scenarios), models=("hawkes", "neural"), t_max=mv_t_max,
                          max_len=mv_max_len, etas=tuple(mv_etas), n_train=n_train,
                          n_cal=mv_n_cal, n_test=mv_n_test, num_seeds=mv_seeds)
    c.bandwidths = dict(mode="paper", h_arr=0.1, h_int=1.0)
    c.hawkes = dict(num_steps=hawkes_steps, lr=0.05)
    c.neural = dict(hidden=hidden, mark_dim=8, num_components=8, lr=3e-3,
                    batch_size=batch_size, grad_clip=5.0)
    c.fpr = dict(settings=tuple(fpr_settings), alphas=(0.01, 0.05, 0.1), delta=0.1,
                 n_cal=fpr_n_cal, n_test=fpr_n_test, num_blocks=fpr_blocks,
                 reps_per_block=fpr_reps, block_size=fpr_block_size)
    c.eval = dict(chunk=chunk, plots=True)
    c.train = train_block(neural_steps, log_every=10, checkpoint_every=100)
    c.mesh = mesh_block()
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="cades_tiny", families=("self_correcting",), spp_etas=(0.0, 0.8),
            spp_n_cal=40, spp_n_test=24, spp_seeds=2, spp_max_len=256,
            scenarios=("server_stop",), mv_etas=(0.0, 1.0), n_train=16, mv_n_cal=24, mv_n_test=16,
            mv_seeds=2, mv_max_len=256, hawkes_steps=20, neural_steps=10, hidden=8, batch_size=8,
            fpr_settings=("server",), fpr_n_cal=40, fpr_n_test=10, fpr_blocks=4,
            fpr_reps=5, fpr_block_size=60, mv_t_max=10.0, chunk=64),
        "quick": lambda: _build(
            tag="cades_quick", families=SPP_FAMILIES, spp_etas=(0.0, 0.25, 0.5, 0.75),
            spp_n_cal=200, spp_n_test=100, spp_seeds=3, spp_max_len=512,
            scenarios=MULTIVARIATE, mv_etas=(0.0, 0.5, 1.0), n_train=100, mv_n_cal=200,
            mv_n_test=100, mv_seeds=3, mv_max_len=512, hawkes_steps=200, neural_steps=200,
            hidden=16, batch_size=16, fpr_settings=("spp", "server", "latency"),
            fpr_n_cal=400, fpr_n_test=100, fpr_blocks=20, fpr_reps=50, fpr_block_size=500,
            mv_t_max=30.0),
        "paper": lambda: _build(
            tag="cades_paper", families=SPP_FAMILIES,
            spp_etas=tuple(round(0.05 * i, 2) for i in range(19)), spp_n_cal=500, spp_n_test=1000,
            spp_seeds=10, spp_max_len=1024, scenarios=MULTIVARIATE,
            mv_etas=tuple(round(0.05 * i, 2) for i in range(21)), n_train=500, mv_n_cal=500,
            mv_n_test=1000, mv_seeds=5, mv_max_len=1280, hawkes_steps=1000, neural_steps=5000,
            hidden=64, batch_size=64, fpr_settings=("spp", "server", "latency"), fpr_n_cal=500,
            fpr_n_test=500, fpr_blocks=1000, fpr_reps=1, fpr_block_size=1000),
        "official": lambda: _build(
            tag="cades_official", parts=("spp",), families=OFFICIAL_SPP_FAMILIES,
            spp_etas=tuple(round(0.05 * i, 2) for i in range(20)), spp_n_cal=1000,
            spp_n_test=1000, spp_seeds=3, spp_max_len=512, spp_max_len_hawkes=3072,
            scenarios=MULTIVARIATE, mv_etas=(0.0, 0.5, 1.0), n_train=100, mv_n_cal=200,
            mv_n_test=100, mv_seeds=3, mv_max_len=512, hawkes_steps=200, neural_steps=200,
            hidden=16, batch_size=16, fpr_settings=("spp",), fpr_n_cal=400, fpr_n_test=100,
            fpr_blocks=20, fpr_reps=50, fpr_block_size=500, mv_t_max=30.0),
    }, arg, default="quick")
