"""The seed tables (tools/sketchdnn_seeds.py, lib/sketchdnn/seeds.py) read workdirs recorded
before `optim.grad_clip` / `warmup_steps` were renamed `optim.clip` / `warmup` and render them
as they render new ones."""
import json
import os

from lib.sketchdnn import seeds


def _workdir(root, seed, optim):
    path = os.path.join(root, f"s{seed}")
    os.makedirs(path)
    config = {"tag": "official", "runs": ["d3pm"], "train": {"num_steps": 6000, "seed": seed},
              "optim": {"lr": 1e-4, "schedule": "constant", "ema_decay": 0.0,
                        "batch_size": 64, **optim},
              "loss": {"ce_mean": "slots_and_classes"}, "diffusion": {"x0_logits": "two_log_p"},
              "model": {"width": 64, "depth": 3}, "eval": {"curve_samples": 0}}
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f)
    return path


def test_old_and_new_key_names_render_the_same(tmp_path):
    texts = []
    for name, optim in (("old", {"warmup_steps": 0, "grad_clip": 0.0}),
                        ("new", {"warmup": 0, "clip": 0.0})):
        dirs = [_workdir(str(tmp_path / name), s, optim) for s in (0, 1)]
        texts.append(seeds.render([seeds.load(d) for d in dirs], dirs))
    assert texts[0] == texts[1]
    assert "Adam 0.0001 constant, clip 0, EMA 0" in texts[0]
