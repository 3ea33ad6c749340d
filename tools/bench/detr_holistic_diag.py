"""What holistic aggregation does to the kept tokens of Dynamic DETR's first encoder block.

    python tools/bench/detr_holistic_diag.py --checkpoints=DIR [--variant=quick] [--images=200]

DIR is a fine-tuned `dynamic_<ρ>` stage's checkpoints folder (`<workdir>/runs/dynamic_0.25/
checkpoints`; copy it first, restoring never writes but a damaged step would be moved aside).
On held-out images it runs the block-0 selection and merge of that variant and reports,
per level: tokens per image, how many the quota keeps, how often a level keeps none (its
dropped tokens then fall back to other levels' kept tokens), the mean size n'_j of a kept
token after the merge (n'_j − 1 is how many dropped tokens it absorbed), the relative change
‖x'_j − x_j‖ / ‖x_j‖ of a kept token's features, and the share of foreground (token centre
inside a ground-truth box) among kept tokens and among the dropped tokens merged into
them. Prints one markdown table. A diagnostic, not a test.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib, paths
from lib.common.checkpoint import Checkpointer
from lib.dynamic_detr import data, objectives
from lib.dynamic_detr import training as detr_task
from lib.dynamic_detr import tokens as tk
from lib.dynamic_detr.model import token_layout

flags.DEFINE_string("checkpoints", None, "checkpoints folder of a dynamic fine-tune stage", required=True)
flags.DEFINE_string("variant", "quick", "config variant the checkpoint was trained with")
flags.DEFINE_float("budget", 0.25, "keep ratio ρ of the stage")
flags.DEFINE_enum("holistic", None, ["context", "kept"], "sparse.holistic the checkpoint was "
                  "trained with (default: the config's; 'kept' for runs made before the option)")
flags.DEFINE_integer("images", 200, "held-out images")
FLAGS = flags.FLAGS


def block0(mod, images):
    """The block-0 selection/merge of `mod.spec` (same calls as `Detector.encode`)."""
    spec = mod.spec
    x0, _ = mod.tokens(images)
    b, n = x0.shape[:2]
    score = mod.score0(x0)
    lvl = jnp.broadcast_to(jnp.asarray(mod.level_np), (b, n))
    ctr = jnp.broadcast_to(jnp.asarray(mod.centre_np), (b, n, 2))
    k = spec.counts(n, mod.enc_layers)[0] - len(tk.context_levels(spec.modes))
    valid = jnp.ones(lvl.shape, bool)
    quota = tk.level_quota(jax.nn.sigmoid(score), lvl, valid, k, mod.num_levels,
                           spec.allocation, spec.level_weights or None)
    idx = tk.select(score, lvl, valid, quota, k)
    ones = jnp.ones((b, n))
    x, size, hmap = tk.merge_tokens(idx, lvl, ctr, x0, ones, spec.modes, spec.temperature,
                                   mod._holistic_rows(spec.modes))
    slot_centre = tk.slot_mean(ctr, hmap, ones, size.shape[1])      # context slots: members' mean
    slot_centre = slot_centre.at[:, :k].set(jnp.take_along_axis(ctr, idx[..., None], 1))
    return x0, idx, x, size, hmap, slot_centre


def main(_):
    config = config_lib.load_config(paths.resolve(f"configs/dynamic_detr/dynamic_detr.py:{FLAGS.variant}"))
    if FLAGS.holistic:
        config.sparse.holistic = FLAGS.holistic
    v = next(v for v in detr_task.variants(config) if v.name == f"dynamic_{FLAGS.budget:g}")
    det = detr_task.detector(config, v.spec)
    dense = detr_task.detector(config)
    params0 = dense.init(jax.random.key(0), jnp.zeros((1, config.data.image_size, config.data.image_size, 3)))
    task = detr_task.make_task(config, v.spec, init_params=params0, teacher=params0 if v.cd else None,
                               lr=1e-4, steps=10)
    abstract = jax.eval_shape(task.init_state, jax.random.key(0))
    restored = Checkpointer(FLAGS.checkpoints, 10**9).restore_latest(abstract)
    if restored is None:
        raise SystemExit(f"no checkpoint in {FLAGS.checkpoints}")
    params = restored[0]["params"]
    val = data.batch([config.train.seed, 11], FLAGS.images, **detr_task.data_kwargs(config))
    level, centre, _, shapes = token_layout(config.data.image_size, len(config.model.widths))
    x0, idx, x, size, hmap, slot_centre = jax.jit(lambda p, im: det.apply(p, im, method=block0))(
        params, val["images"])
    fg = np.asarray(objectives.foreground(jnp.asarray(centre), val["boxes"], val["valid"])) > 0
    x0, idx, x, size, hmap, slot_centre = map(np.asarray, (x0, idx, x, size, hmap, slot_centre))
    bi = np.arange(idx.shape[0])[:, None]
    k_level, k_fg = level[idx], fg[bi, idx]
    kept = np.zeros(fg.shape, bool)
    kept[bi, idx] = True
    xin = x0[bi, idx]
    xk = x[:, :idx.shape[1]]
    rel = np.linalg.norm(xk - xin, axis=-1) / (np.linalg.norm(xin, axis=-1) + 1e-9)
    modes = v.spec.modes
    print(f"checkpoint {FLAGS.checkpoints}; variant {v.name}; modes {modes}; "
          f"{idx.shape[0]} images\n")
    print("| level | mode | tokens | kept / image | images keeping none | kept size n' (mean, max) "
          "| ‖x'−x‖/‖x‖ of kept (mean) | foreground share: kept | : dropped merged into kept "
          "| background dropped → foreground slot | dropped → slot distance |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for l, s in enumerate(shapes):
        m = k_level == l
        per_img = m.sum(1)
        drop_l = (~kept) & (level[None] == l) & (hmap >= 0)
        dest = np.maximum(hmap, 0)                          # slot of each original token
        dist = np.linalg.norm(centre[None] - np.take_along_axis(slot_centre, dest[..., None], 1), axis=-1)
        slot_fg = np.concatenate([k_fg, np.zeros((k_fg.shape[0], size.shape[1] - k_fg.shape[1]), bool)], 1)
        bg_to_fg = np.take_along_axis(slot_fg, dest, 1)[drop_l & ~fg]
        print(f"| {l} | {modes[l]} | {s * s} | {per_img.mean():.2f} | {np.mean(per_img == 0):.2f} | "
              f"{size[:, :idx.shape[1]][m].mean() if m.any() else float('nan'):.2f}, {size[:, :idx.shape[1]][m].max() if m.any() else 0:.1f} | "
              f"{rel[m].mean() if m.any() else float('nan'):.3f} | {k_fg[m].mean() if m.any() else float('nan'):.2f} | "
              f"{fg[drop_l].mean() if drop_l.any() else float('nan'):.2f} | "
              f"{bg_to_fg.mean() if bg_to_fg.size else float('nan'):.2f} | "
              f"{dist[drop_l].mean() if drop_l.any() else float('nan'):.3f} |")
    extra = size.shape[1] - idx.shape[1]
    if extra:
        print(f"\ncontext slots (levels {tk.context_levels(modes)}): mean size "
              f"{np.round(size[:, idx.shape[1]:].mean(0), 2).tolist()}; their distance column is "
              "to the members' mean centre")


if __name__ == "__main__":
    run_tool(main)
