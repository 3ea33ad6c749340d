"""Gaussian-Softmax forward process, schedules, reverse steps and the baselines' posteriors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.sketchdnn import baselines, diffusion
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.label_process import gaussian_label_process


def test_schedules_follow_the_notes():
    ab = diffusion.cosine_alpha_bar(2000)
    assert ab.shape == (2001,) and ab[1] == pytest.approx(0.9999) and ab[-1] == pytest.approx(1e-4)
    assert np.all(np.diff(ab) <= 0)
    for d in (2, 5):
        k = ab[1]
        abd = diffusion.discrete_alpha_bar(ab, d, k)
        assert np.all(np.diff(abd) <= 1e-12) and abd[-1] < 1e-3
        # the logit-space SNR equals n = log²((1−a)/((D−1)a+1)), a = √ᾱ  (derived, notes A.3)
        a = np.sqrt(ab)
        m = np.log((1 - k) / ((d - 1) * k + 1)) ** 2
        np.testing.assert_allclose(abd * m / (1 - abd), np.log((1 - a) / ((d - 1) * a + 1)) ** 2,
                                   rtol=1e-9)
    with pytest.raises(ValueError, match="at least 2"):
        diffusion.cosine_alpha_bar(1)


def test_softmax_of_noised_logits_converges_to_the_clean_one_hot():
    onehot = jax.nn.one_hot(jnp.array([0, 3, 4, 1]), 5)
    logits = 12.0 * (2 * onehot - 1)                     # clean logits of the one-hot
    scales = jnp.array([0.9, 0.5, 0.2, 0.05, 1e-3, 0.0])
    x = jax.jit(jax.vmap(lambda sc: diffusion.gaussian_softmax(logits, sc, jax.random.key(0))))(
        scales)
    errs = np.max(np.abs(np.asarray(x) - np.asarray(onehot)), (1, 2))
    assert np.all(np.diff(errs) < 0) and errs[-1] < 1e-9
    # the forward process of the paper: x_t → π₀ = k·onehot + (1−k)/D as t → 1
    proc = diffusion.gaussian_softmax_process(5, diffusion.cosine_alpha_bar(200))
    oh = jnp.tile(onehot, (50, 1))
    ts = jnp.array([150, 100, 50, 20, 5, 1])
    xt = np.asarray(jax.jit(jax.vmap(lambda t: proc.noise(jax.random.key(1), oh, jnp.full(
        oh.shape[:-1], t))))(ts))
    gaps = np.mean(np.abs(xt - np.asarray(oh)), (1, 2))
    assert np.all(np.diff(gaps) < 0)
    assert gaps[-1] < 1e-3 and np.max(np.abs(xt[-1] - np.asarray(oh))) < 0.05


def test_forward_process_reaches_the_prior_and_stays_on_the_simplex():
    proc = diffusion.make_process("gaussian_softmax", 100)
    x0 = jnp.asarray(sk.encode((sk.Primitive("circle", (0.1, 0.2, 0.3)),), 4))[None]
    x0 = jnp.tile(x0, (2000, 1, 1))
    xt = jax.jit(lambda k: diffusion.q_sample(proc, k, x0, jnp.full((2000,), 100)))(
        jax.random.key(0))
    _, y, p = (np.asarray(a) for a in diffusion.split(xt))
    np.testing.assert_allclose(y.sum(-1), 1, atol=1e-5)
    # at t = T the type is near-uniform: the label of x₀ is no longer visible
    assert np.max(np.abs(y.mean((0, 1)) - 0.2)) < 0.02
    assert abs(p.mean()) < 0.02 and abs(p.std() - 1) < 0.02


def test_gaussian_posterior_is_the_exact_conditional():
    # q(x_s | x_t, x₀) for a scalar chain, checked against Gaussian conditioning
    ab = jnp.asarray(diffusion.cosine_alpha_bar(50), jnp.float32)
    t, s, x0, xt = 30, 12, 0.7, -0.4
    mean, std = diffusion.gaussian_posterior(ab, jnp.array([xt]), jnp.array([x0]),
                                             jnp.array([t]), jnp.array([s]))
    a_s, a_t = float(ab[s]), float(ab[t])
    cov = np.array([[1 - a_s, np.sqrt(a_t / a_s) * (1 - a_s)],
                    [np.sqrt(a_t / a_s) * (1 - a_s), 1 - a_t]])
    mu = np.array([np.sqrt(a_s) * x0, np.sqrt(a_t) * x0])
    m_ref = mu[0] + cov[0, 1] / cov[1, 1] * (xt - mu[1])
    v_ref = cov[0, 0] - cov[0, 1] ** 2 / cov[1, 1]
    assert float(mean[0]) == pytest.approx(m_ref, rel=1e-4)
    assert float(std[0]) ** 2 == pytest.approx(v_ref, rel=1e-3)


def test_d3pm_posterior_matches_bayes_rule():
    ab = diffusion.cosine_alpha_bar(20)
    proc = baselines.d3pm_process(4, ab)
    keep = baselines.d3pm_keep(ab)
    t, s, x0, xt = 9, 4, 2, 1
    # brute force: q(x_s | x₀) q(x_t | x_s) normalised over x_s
    q_s = keep[s] * np.eye(4)[x0] + (1 - keep[s]) / 4
    a = keep[t] / keep[s]
    q_t_given_s = a * np.eye(4)[:, xt] + (1 - a) / 4
    ref = q_s * q_t_given_s / np.sum(q_s * q_t_given_s)
    onehot_t, onehot_0 = jax.nn.one_hot(xt, 4), jax.nn.one_hot(x0, 4)
    draws = jax.jit(jax.vmap(lambda k: proc.step(k, onehot_t, onehot_0, jnp.array(t),
                                                 jnp.array(s))))(
        jax.random.split(jax.random.key(0), 20000))
    np.testing.assert_allclose(np.mean(np.asarray(draws), 0), ref, atol=0.015)
    # with the true x₀ the KL term vanishes; with a wrong p̂ it does not
    kl = jax.jit(jax.vmap(lambda p: proc.kl(onehot_0, onehot_t, p, jnp.array(t))))(
        jnp.stack([onehot_0, jnp.full(4, 0.25)]))
    assert float(kl[0]) == pytest.approx(0.0, abs=1e-6) and float(kl[1]) > 1e-3


def test_sampler_returns_probabilities_and_soft_masked_parameters():
    def denoise(x, t):                         # a fixed "network": line with known params
        out = jnp.zeros(x.shape).at[..., 2].set(5.0)
        return out.at[..., 7:11].set(jnp.array([0.1, 0.2, 0.3, 0.4])).at[..., 12].set(9.0)

    for kind in ("gaussian_softmax",):       # the baselines' steps: tests above
        proc = diffusion.make_process(kind, 30)
        x = np.asarray(jax.jit(lambda k, pr=proc: diffusion.sample(pr, denoise, k, 3, 5, 4))(
            jax.random.key(0)))
        _, y, p = diffusion.split(x)
        assert x.shape == (3, 5, 21) and np.all(np.isfinite(x))
        np.testing.assert_allclose(y.sum(-1), 1, atol=1e-5)
        assert np.all(np.argmax(y, -1) == 0)
        # line columns kept, the circle column scaled by p̂(circle)/p̂(line) = e⁰/e⁵
        np.testing.assert_allclose(p[..., :4], np.broadcast_to([.1, .2, .3, .4], (3, 5, 4)),
                                   rtol=1e-5)
        np.testing.assert_allclose(p[..., 5], 9.0 * np.exp(-5.0), rtol=1e-4)
        assert np.max(np.abs(p[..., 6:])) == 0.0
    with pytest.raises(ValueError, match="sample_steps"):
        diffusion.sampling_times(30, 31)
    with pytest.raises(ValueError, match="unknown process"):
        diffusion.make_process("ddim", 30)


def test_two_log_p_reverse_step_is_the_official_posterior_on_2_log_p_hat():
    T, d, t = 50, 5, 3
    ab = diffusion.cosine_alpha_bar(T)
    proc = diffusion.gaussian_softmax_process(d, ab, x0_logits="two_log_p")
    p_hat = jnp.array([[0.5, 0.25, 0.125, 0.0625, 0.0625]])
    x_t = jnp.array([[0.1, 0.2, 0.3, 0.15, 0.25]])
    key = jax.random.key(3)
    got = np.asarray(proc.step(key, x_t, p_hat, jnp.array([t]), jnp.array([t - 1])))
    # the official discrete_posterior_step, written out in numpy (float64)
    k = ab[1]
    abd = diffusion.discrete_alpha_bar(ab, d, k)
    cur, prev = abd[t], abd[t - 1]
    a = cur / prev
    mean = (np.sqrt(prev) * (1 - a) * 2 * np.log(np.asarray(p_hat, np.float64))
            + np.sqrt(a) * (1 - prev) * np.log(np.asarray(x_t, np.float64))) / (1 - cur)
    z = mean + np.sqrt((1 - prev) / (1 - cur) * (1 - a)) * np.asarray(
        jax.random.normal(key, x_t.shape), np.float64)
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-6)
    # the default (Σ p̂·u, u = log π₀) is a different step on the same input
    default = diffusion.gaussian_softmax_process(d, ab)
    assert np.max(np.abs(np.asarray(default.step(key, x_t, p_hat, jnp.array([t]),
                                                 jnp.array([t - 1]))) - got)) > 1e-2


def test_two_log_p_kl_vanishes_where_2_log_p_hat_is_the_label_logit_up_to_a_shift():
    ab = diffusion.cosine_alpha_bar(50)
    d, t = 5, jnp.array([10])
    proc = diffusion.gaussian_softmax_process(d, ab, x0_logits="two_log_p")
    onehot = jax.nn.one_hot(jnp.array([2]), d)
    k = ab[1]
    u = np.log(k * np.asarray(onehot) + (1 - k) / d)            # the label embedding log π₀
    p_exact = jax.nn.softmax(jnp.asarray(u / 2), -1)            # 2·log p̂ = u − const
    assert float(proc.kl(onehot, None, p_exact, t)[0]) == pytest.approx(0.0, abs=1e-6)
    p_off = jnp.array([[0.1, 0.1, 0.6, 0.1, 0.1]])
    x0 = 2 * np.log(np.asarray(p_off))
    diff = u - x0 - np.mean(u - x0)
    abd = diffusion.discrete_alpha_bar(ab, d, k)
    w = abd[9] / (1 - abd[9]) - abd[10] / (1 - abd[10])
    assert float(proc.kl(onehot, None, p_off, t)[0]) == pytest.approx(
        0.5 * w * np.sum(diff ** 2), rel=1e-4)
    with pytest.raises(ValueError, match="x0_logits must be one of"):
        diffusion.gaussian_softmax_process(d, ab, x0_logits="three_log_p")
    with pytest.raises(ValueError, match="Gaussian-Softmax"):
        gaussian_label_process("onehot_gaussian", d, ab, -1.0, 1.0, simplex=False,
                          x0_logits="two_log_p")
