"""The image side of GMFlow: the convolutional GM denoiser, downsampling, the balanced real
reference set, and averaging sweeps over seeds (mean and standard error in closed form)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.gmflow import image_data, report
from lib.gmflow.networks import GMFlowUNet


def test_unet_head_shapes_and_init():
    """(B, H·W, C) in, GM out: means (B, K, H·W, C); zero-initialised logits (uniform weights)
    and log-std head (s = 1); the class label changes the output; jit keeps shape and dtype."""
    model = GMFlowUNet(height=8, width=4, channels=2, num_components=3, features=(4, 8),
                       num_classes=5, t_embed_dim=8, cond_dim=8)
    x = jax.random.normal(jax.random.key(0), (2, 32, 2))
    labels = jnp.array([0, 5])                     # 5 = the null class
    params = jax.jit(model.init)(jax.random.key(1), x, jnp.ones((2,)), labels)
    apply = jax.jit(lambda p, x, t, lab: model.apply(p, x, t, lab))
    gm = apply(params, x, jnp.array([0.3, 0.7]), labels)
    assert gm.means.shape == (2, 3, 32, 2) and gm.means.dtype == jnp.float32
    assert gm.logweights.shape == (2, 3, 32) and gm.logstd.shape == (2,)
    np.testing.assert_allclose(gm.logweights, np.log(1 / 3), atol=1e-6)
    np.testing.assert_allclose(gm.logstd, 0.0, atol=1e-7)
    other = apply(params, x, jnp.array([0.3, 0.7]), jnp.array([1, 5]))
    assert not np.allclose(other.means[0], gm.means[0]) and np.allclose(other.means[1], gm.means[1])


def test_unet_rejects_bad_shapes_and_missing_labels():
    model = GMFlowUNet(height=6, width=6, channels=1, num_components=2, features=(4, 4, 4))
    with pytest.raises(ValueError, match="divisible by 4"):
        model.init(jax.random.key(0), jnp.zeros((1, 36, 1)), jnp.ones((1,)))
    model = GMFlowUNet(height=4, width=4, channels=1, num_components=2, features=(4,),
                       num_classes=3)
    with pytest.raises(ValueError, match=r"\(B, 16, 1\)"):
        model.init(jax.random.key(0), jnp.zeros((1, 15, 1)), jnp.ones((1,)), jnp.zeros((1,), int))
    with pytest.raises(ValueError, match="needs labels"):
        model.init(jax.random.key(0), jnp.zeros((1, 16, 1)), jnp.ones((1,)))


def test_downsample_averages_blocks():
    rng = np.random.default_rng(0)
    img = rng.random((3, 4, 6, 2)).astype(np.float32)
    out = image_data.downsample(img, 2)
    assert out.shape == (3, 2, 3, 2) and out.dtype == np.float32
    np.testing.assert_allclose(out[1, 1, 2], img[1, 2:4, 4:6].mean(axis=(0, 1)), rtol=1e-6)
    assert image_data.downsample(img, 1) is img
    with pytest.raises(ValueError, match="divisible"):
        image_data.downsample(img, 4)


def test_class_balanced_subset():
    labels = np.repeat(np.arange(4), [10, 20, 30, 5])
    idx = image_data.class_balanced_subset(labels, 14, seed=3)
    assert len(np.unique(idx)) == 14 and np.all(np.diff(idx) > 0)
    assert np.bincount(labels[idx]).tolist() == [4, 4, 3, 3]
    np.testing.assert_array_equal(idx, image_data.class_balanced_subset(labels, 14, seed=3))
    with pytest.raises(ValueError, match="class 3 has 5 rows"):
        image_data.class_balanced_subset(labels, 40, seed=0)


def _sweep(fd, prec, sat, scale=1.0):
    row = {"scale": scale, "fd": fd, "precision": prec, "recall": 0.5, "saturation": sat,
           "out_of_range": 0.1, "accuracy": 1.0}
    return row


def _nfe(pg, cfg):
    return {"4": {"pg": {"solver": "gm_ode2", "sweep": [pg]},
                  "cfg": {"solver": "euler", "sweep": [cfg]}}}


def test_mean_over_seeds_and_per_seed_targets():
    """Two seeds: mean (a + b)/2, SE = sample std/√2 = |a − b|/2. The target is judged on the
    means and counted per seed."""
    seed0 = _nfe(_sweep(4.0, 0.90, 0.70, 0.1), _sweep(6.0, 0.88, 0.72, 1.5))   # PG meets it
    seed1 = _nfe(_sweep(8.0, 0.80, 0.74, 0.1), _sweep(6.0, 0.90, 0.72, 1.5))   # PG misses
    mean = report.mean_over_seeds([seed0, seed1])
    pg = mean["4"]["pg"]["sweep"][0]
    np.testing.assert_allclose([pg["fd"], pg["fd_se"]], [6.0, 2.0])
    np.testing.assert_allclose([pg["precision"], pg["precision_se"]], [0.85, 0.05])
    assert pg["n_seeds"] == 2 and pg["recall_se"] == 0.0
    digits = {"dataset": "digits", "nfe": mean,
              "per_seed": [{"seed": 0, "nfe": seed0}, {"seed": 1, "nfe": seed1}]}
    t = report.digits_targets(digits)["4"]
    assert t["seeds_met"] == 1 and t["n_seeds"] == 2 and not t["met"]   # mean prec. 0.85 < 0.89
    assert "1 of 2" in report.targets_table({"digits": {"4": t}})
    with pytest.raises(ValueError, match="scales"):
        report.mean_over_seeds([seed0, _nfe(_sweep(1, 1, 1, 0.2), _sweep(1, 1, 1, 1.5))])
