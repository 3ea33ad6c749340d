"""Augmentations, the small ResNet / SimCLR network and the linear probe."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.cl_similarity import augment as A
from lib.cl_similarity import probe
from lib.cl_similarity.encoder import SimCLRNet
from lib.nn.resnet import SmallResNet


def _images(b=4, h=8, w=8):
    rng = np.random.default_rng(0)
    return jnp.asarray(rng.uniform(size=(b, h, w, 1)), jnp.float32)


def test_crop_of_the_whole_image_is_the_identity_and_a_corner_crop_upsamples_it():
    x = _images(1, 8, 8)[0]
    crop = jax.jit(A.resized_crop)
    full = crop(x, jnp.array([8.0, 8.0]), jnp.array([0.0, 0.0]))
    np.testing.assert_allclose(np.asarray(full), np.asarray(x), atol=1e-5)
    quarter = crop(x, jnp.array([4.0, 4.0]), jnp.array([4.0, 0.0]))
    # a 4×4 crop at rows 4..7, cols 0..3 scaled ×2: its mean equals the crop's mean
    assert float(quarter.mean()) == pytest.approx(float(x[4:, :4].mean()), abs=0.03)


def test_crop_boxes_lie_inside_the_image_with_the_requested_area():
    keys = jax.random.split(jax.random.key(0), 200)
    size, off = jax.jit(jax.vmap(lambda k: A.crop_box(k, 28, 28, 0.3)))(keys)
    assert np.all(off >= 0) and np.all(off + size <= 28 + 1e-4)
    area = np.prod(np.asarray(size), axis=1) / 28**2
    assert area.min() >= 0.3 * 0.75 - 1e-6 and area.max() <= 1.0 + 1e-6


def test_views_are_deterministic_per_key_in_range_and_flip_is_a_mirror():
    x = _images()
    cfg = A.AugmentConfig()
    views = jax.jit(A.two_views, static_argnums=2)
    a1, b1 = views(jax.random.key(3), x, cfg)
    a2, _ = views(jax.random.key(3), x, cfg)
    np.testing.assert_array_equal(np.asarray(a1), np.asarray(a2))
    assert a1.shape == x.shape and float(a1.min()) >= 0 and float(a1.max()) <= 1
    assert float(jnp.abs(a1 - b1).max()) > 0.05                      # two different views
    flip_only = A.AugmentConfig(min_scale=1.0, flip_prob=1.0, jitter_prob=0.0, noise_std=0.0)
    # compare against the same key (same crop, same jitter draws) without the flip
    no_flip = flip_only._replace(flip_prob=0.0)
    k = jax.random.key(5)
    one = jax.jit(A.augment_image, static_argnums=2)
    np.testing.assert_allclose(np.asarray(one(k, x[0], flip_only)),
                               np.asarray(one(k, x[0], no_flip))[:, ::-1], atol=1e-6)


def test_resnet_shapes_and_that_an_images_features_do_not_depend_on_the_batch():
    net = SimCLRNet((8, 16), 1, 32, 12)
    x = _images(5)
    params = jax.jit(net.init)(jax.random.key(0), x[:1])
    apply = jax.jit(net.apply)
    h, z = apply(params, x)
    assert h.shape == (5, 16) and z.shape == (5, 12)
    h1, _ = apply(params, x[2:3])
    np.testing.assert_allclose(np.asarray(h1[0]), np.asarray(h[2]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"\(batch, H, W, C\)"):
        SmallResNet((8,)).init(jax.random.key(0), jnp.zeros((8, 8, 1)))
    with pytest.raises(ValueError, match="norm must be"):
        SmallResNet((8,), norm="batch").init(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))


def test_linear_probe_separates_separable_classes_and_is_at_chance_on_noise():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 6)) * 3
    y = np.repeat(np.arange(3), 40)
    x = centres[y] + 0.3 * rng.normal(size=(120, 6))
    res = probe.linear_probe(jnp.asarray(x[::2]), jnp.asarray(y[::2]), jnp.asarray(x[1::2]),
                             jnp.asarray(y[1::2]), 3, steps=300, lr=0.1)
    assert res.test_acc == 1.0
    noise = rng.normal(size=(120, 6))
    res = probe.linear_probe(jnp.asarray(noise[::2]), jnp.asarray(y[::2]),
                             jnp.asarray(noise[1::2]), jnp.asarray(y[1::2]), 3, steps=300, lr=0.1)
    assert res.test_acc < 0.6
    with pytest.raises(ValueError, match="disagree"):
        probe.fit_linear(jnp.ones((4, 2)), jnp.zeros(3, jnp.int32), 2)
