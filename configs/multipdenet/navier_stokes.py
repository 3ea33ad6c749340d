"""MultiPDENet on 2-D Kolmogorov flow (Re = 1000, forcing sin(4y), drag 0.1; notes §2.2).

    python experiments/multipdenet/main.py --config=configs/multipdenet/navier_stokes.py:quick

Variants:
  tiny    32² -> 16² data, tiny networks, a few steps (tests; seconds).
  quick   256² -> 32² pseudo-spectral DNS (1 time unit of warm-up, 3 saved), ΔT = 0.028
          (= 4·dt₆₄, the notes' reading of "128Δt"), M = 4; 5 train / 10 test
          trajectories. 32² rather than the paper's 64² keeps a run to minutes on 2 CPU
          cores; at 32² the flow is badly under-resolved, which is MultiPDENet's regime.
  paper   2048² -> 64² as in LI/TSM (20 saved time units); for accelerators.
  front   the learned point of tools/bench/multipdenet_front.py: 20 training
          trajectories on the attractor (256² -> 32², `front_train` data), ΔT and M as
          quick, batch 8, a window curriculum 2 -> 4 -> 8 macro steps, 1,200 steps.
  front_64  front at 64² (`front_train_64` data, 256² -> 64²), made cheap: the corrector
          once per ΔT (at 32² as accurate as at every RK stage, 2.8× cheaper) and no MiNN
          (M FNO calls per ΔT; removing it cost 5 % of HCT in the 32² ablation), so two FNO
          calls per ΔT (Corr, MaNN); M = 4 micro steps (dt₆₄, the 64² solver's stable
          step), FNO modes 12; 600 steps (a 64² step costs 4× a 32² one: 47 min on 2 cores).
  front_64_small  front_64 at 0.46 of its wall (SPEED.md): FNO width 6, projection 16, M = 3.
  front_64_dt2  front_64_small with ΔT = 2 saved frames (the truth's frame interval, 0.056):
          half the FNO calls per time unit; M = 5 (the 64² FD4 + RK4 stable step), windows
          1 -> 2 -> 4 (the same time spans as front_64's 2 -> 4 -> 8).
  front_64_dt4  the same with ΔT = 4 saved frames (0.112), M = 10, windows 1 -> 2.
  front_64_dt2_long  front_64_dt2 for 1,200 steps (its loss still fell at 600; its HCT fell).
  front_64_dt2_w8  front_64_dt2 with windows 1 -> 2 -> 4 -> 8 (0.45 time units, twice the
          longest window of front_64_dt2): longer training fitted the 4-ΔT window better and
          lost long-horizon skill (NOTES.md).
  front_64_dt2_pf  front_64_dt2 trained from its own rollouts: 8 pushforward macro steps
          (0.45 time units) without gradient before each window, and input noise of 1 % of
          the RMS (training levers for long rollouts, beyond the paper).
  front_64_dt2_corr  front_64_dt2 with a (1 − correlation) term of weight 1 in the loss.
  front_64_dt2_m4  front_64_dt2 with M = 4: the micro step the attractor's peak speed
          allows (4.6 rather than the initial fields' 7).
  front_64_dt8  ΔT = 8 saved frames (0.224), M = 10 (a micro step 2× the initial fields'
          bound, 1.3× the attractor's), windows 1 -> 2: temporal coarsening.
  front_64_dt8_pf  front_64_dt8 trained from its own rollouts: 2 pushforward macro steps
          (0.45 time units, as front_64_dt2_pf) and input noise of 1 % of the RMS.
  front_64_dt8_pf_m6  front_64_dt8_pf with M = 6: a micro step (0.037) beyond the 64²
          classical stability limit (0.028), which only the corrector can keep stable.
  front_64_dt8_pf_frozen  front_64_dt8_pf with the FD4 stencils frozen: a micro step reads
          4-5 taps per derivative instead of the learnable families' 20-25 (SPEED.md).
  front_64_dt8_pf_fd4  front_64_dt8_pf with learnable stencils on the FD4 taps only
          (`fd4_taps`: 1 parameter per derivative), so a micro step costs the frozen one's.
  front_64_dt8_pf_fd4_m8, _m7  front_64_dt8_pf_fd4 with M = 8 (micro step 0.028, the 64²
          FD4 + RK4 limit on the attractor) and M = 7 (0.032, past it).
  front_64_dt8_pf_fd4_m8_nonets  the ablation of front_64_dt8_pf_fd4_m8 without networks
          (no corrector, MiNN or MaNN): the Physics Block with its 2 learnable stencil
          parameters alone, i.e. a classical FD4 + RK4 step with trained stencils.
  front_64_dt8_pf_fd4_m8_cnn  front_64_dt8_pf_fd4_m8_nonets plus a local MaNN once per ΔT: two
          3×3 periodic convolutions of width 16 and a 1×1 output (`unet` with one level), a
          subgrid correction that reads a 5×5 neighbourhood at a fraction of an FNO's cost.
  front_64_dt8_pf_fd4_m8_nonets_h2, _cnn_h2  the same two trained on the horizon the metric
          judges: windows 1 -> 3 -> 9 macro steps (2.0 time units), a (1 − correlation) term of
          weight 1, `jax.checkpoint` per macro step.
  front_64_dt8_pf_fd4_m8_cnn_tuned  the local MaNN on top of the tuned classical program: the
          stencils start at `fd4_tuned`'s 64² knobs for this micro step (fd4_tuned.json; 2 steps
          per truth frame) and stay frozen; only the network trains. _h2: with the horizon loss.
  front_64_dt8_pf_fd4_m8_nonets_h2_from_tuned  _nonets_h2 with its stencils started at those
          knobs and free: does the loss keep the grid search's optimum or leave it?
  front_64_dt8_pf_fd4_m8_cnn_h2_large, _cnn_tuned_h2_large  the two network forms trained on
          `front_train_64_large` (120 trajectories of 6 time units, 12× the data): does more data
          let the local MaNN add HCT?
Generalisation (unseen Re, forcing, the [0, 4π]² domain) uses the same trained workdir
with `tools/multipdenet_transfer.py`.
"""
from configs.multipdenet import _base
from configs.pde_data import navier_stokes as data
from lib.multipdenet.config_schema import config, validate  # noqa: F401  (validate: the config test)
from lib.common import config as config_lib
from lib.multipdenet import tuning

VARIANTS = ("tiny", "quick", "paper", "front", "front_64", "front_64_small", "front_64_dt2",
            "front_64_dt4", "front_64_dt2_long", "front_64_dt2_w8", "front_64_dt2_pf",
            "front_64_dt2_corr", "front_64_dt2_m4", "front_64_dt8", "front_64_dt8_pf",
            "front_64_dt8_pf_m6", "front_64_dt8_pf_frozen", "front_64_dt8_pf_fd4",
            "front_64_dt8_pf_fd4_m8", "front_64_dt8_pf_fd4_m7", "front_64_dt8_pf_fd4_m8_nonets",
            "front_64_dt8_pf_fd4_m8_cnn", "front_64_dt8_pf_fd4_m8_nonets_h2",
            "front_64_dt8_pf_fd4_m8_cnn_h2", "front_64_dt8_pf_fd4_m8_cnn_tuned",
            "front_64_dt8_pf_fd4_m8_cnn_tuned_h2", "front_64_dt8_pf_fd4_m8_nonets_h2_from_tuned",
            "front_64_dt8_pf_fd4_m8_cnn_h2_large", "front_64_dt8_pf_fd4_m8_cnn_tuned_h2_large")

# A loss over the horizon the HCT metric judges (2.0 time units at ΔT = 0.224).
HORIZON_LOSS = {"train.window": 9, "train.window_curriculum": (1, 3, 9), "train.corr_weight": 1.0,
                "train.remat": True}


def tuned_knobs(n: int, steps: int) -> tuple[float, float]:
    """(φ, θ), the `model.stencil_init` order, of `fd4_tuned` on an n² grid at `steps` steps
    per truth frame."""
    theta, phi = tuning.tuned_knobs(n, steps)
    return phi, theta


def on_data(cfg, data_variant: str):
    """`cfg` trained on the configs/pde_data `data_variant` dataset instead; its tag gains the
    variant's last word (front_train_64_large: `<tag>_large`)."""
    cfg = cfg.copy_and_resolve_references()
    with cfg.unlocked():
        cfg.dataset = data.get_config(data_variant)
        cfg.tag = f"{cfg.tag}_{data_variant.rsplit('_', 1)[-1]}"
    return cfg


def get_config(arg=None):
    return config_lib.variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "navier_stokes_tiny"),
        "quick": lambda: config(_base.coarser(data.get_config("quick"), 8), {
            "tag": "navier_stokes_quick", "train.num_steps": 300, "train.window": 4,
            "train.batch_size": 4, "optim.lr": 2e-3, "model.fno_modes": 8,
            "train.checkpoint_every": 50}),
        "paper": lambda: config(data.get_config("paper"), {
            "tag": "navier_stokes_paper", "train.num_steps": 20000, "train.window": 16,
            "train.batch_size": 16, "optim.lr": 2e-3, "train.checkpoint_every": 1000}),
        "front": lambda: config(data.get_config("front_train"), {
            "tag": "navier_stokes_front", "train.num_steps": 1200, "train.window": 8,
            "train.window_curriculum": (2, 4, 8), "train.batch_size": 8, "optim.lr": 2e-3,
            "model.fno_modes": 8, "train.checkpoint_every": 100}),
        "front_64": lambda: config(data.get_config("front_train_64"), {
            "tag": "navier_stokes_front_64", "train.num_steps": 600, "train.window": 8,
            "train.window_curriculum": (2, 4, 8), "train.batch_size": 8, "optim.lr": 2e-3,
            "model.fno_modes": 12, "model.corrector_every": "macro", "model.micro_net": "none",
            "train.checkpoint_every": 100}),
        "front_64_small": lambda: config_lib.apply_overrides(get_config("front_64"), {
            "tag": "navier_stokes_front_64_small", "model.fno_width": 6,
            "model.fno_projection": 16, "model.n_micro": 3}),
        "front_64_dt2": lambda: config_lib.apply_overrides(get_config("front_64_small"), {
            "tag": "navier_stokes_front_64_dt2", "model.frame_stride": 2, "model.n_micro": 5,
            "train.window": 4, "train.window_curriculum": (1, 2, 4)}),
        "front_64_dt2_long": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt2_long", "train.num_steps": 1200}),
        "front_64_dt2_w8": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt2_w8", "train.window": 8,
            "train.window_curriculum": (1, 2, 4, 8)}),
        "front_64_dt4": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt4", "model.frame_stride": 4, "model.n_micro": 10,
            "train.window": 2, "train.window_curriculum": (1, 2)}),
        "front_64_dt2_pf": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt2_pf", "train.pushforward": 8,
            "train.noise_std": 0.01}),
        "front_64_dt2_corr": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt2_corr", "train.corr_weight": 1.0}),
        "front_64_dt2_m4": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt2_m4", "model.n_micro": 4}),
        "front_64_dt8": lambda: config_lib.apply_overrides(get_config("front_64_dt2"), {
            "tag": "navier_stokes_front_64_dt8", "model.frame_stride": 8, "model.n_micro": 10,
            "train.window": 2, "train.window_curriculum": (1, 2)}),
        "front_64_dt8_pf": lambda: config_lib.apply_overrides(get_config("front_64_dt8"), {
            "tag": "navier_stokes_front_64_dt8_pf", "train.pushforward": 2,
            "train.noise_std": 0.01}),
        "front_64_dt8_pf_m6": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf"), {
            "tag": "navier_stokes_front_64_dt8_pf_m6", "model.n_micro": 6}),
        "front_64_dt8_pf_frozen": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf"), {
            "tag": "navier_stokes_front_64_dt8_pf_frozen", "model.filter_mode": "frozen"}),
        "front_64_dt8_pf_fd4": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4", "model.filter_layout": "fd4_taps"}),
        "front_64_dt8_pf_fd4_m8": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8", "model.n_micro": 8}),
        "front_64_dt8_pf_fd4_m7": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m7", "model.n_micro": 7}),
        "front_64_dt8_pf_fd4_m8_nonets": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_nonets", "model.corrector": "none",
            "model.micro_net": "none", "model.macro_net": "none"}),
        "front_64_dt8_pf_fd4_m8_cnn": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_nonets"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_cnn", "model.macro_net": "unet",
            "model.unet_features": (16,)}),
        "front_64_dt8_pf_fd4_m8_nonets_h2": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_nonets"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_nonets_h2", **HORIZON_LOSS}),
        "front_64_dt8_pf_fd4_m8_cnn_h2": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_cnn"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_cnn_h2", **HORIZON_LOSS}),
        "front_64_dt8_pf_fd4_m8_cnn_tuned": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_cnn"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_cnn_tuned",
            "model.stencil_init": tuned_knobs(64, 2), "train.freeze_stencils": True}),
        "front_64_dt8_pf_fd4_m8_cnn_tuned_h2": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_cnn_tuned"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_cnn_tuned_h2", **HORIZON_LOSS}),
        "front_64_dt8_pf_fd4_m8_nonets_h2_from_tuned": lambda: config_lib.apply_overrides(get_config("front_64_dt8_pf_fd4_m8_nonets_h2"), {
            "tag": "navier_stokes_front_64_dt8_pf_fd4_m8_nonets_h2_from_tuned",
            "model.stencil_init": tuned_knobs(64, 2)}),
        **{f"front_64_dt8_pf_fd4_m8_{v}_large": (lambda v=v: on_data(
            get_config(f"front_64_dt8_pf_fd4_m8_{v}"), "front_train_64_large"))
           for v in ("cnn_h2", "cnn_tuned_h2")},
    }, arg, default="quick")
