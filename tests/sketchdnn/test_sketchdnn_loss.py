"""Training loss weighting and the NLL bound: a known label distribution gives its entropy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.sketchdnn import baselines, diffusion, evaluation, loss
from lib.sketchdnn import sketch as sk


P = jnp.array([0.4, 0.3, 0.15, 0.1, 0.05])
ENTROPY_BITS = float(-(P * jnp.log2(P)).sum())         # 2.0087
T = 400


def _exact_posterior(kind, ab):
    """p(y | x_t) of labels y ~ P under each process (Bayes with the forward marginal)."""
    d = len(P)
    if kind == "gaussian_softmax":
        k = float(ab[1])
        gap = np.log(k + (1 - k) / d) - np.log((1 - k) / d)
        abd = jnp.asarray(diffusion.discrete_alpha_bar(ab, d, k), jnp.float32)

        def post(x, t):      # log-likelihood ∝ √ᾱ·gap·l_t[y]/(1−ᾱ), l_t = log x_t + const
            a = abd[t][..., None]
            return jax.nn.softmax(jnp.log(P) + jnp.sqrt(a) * gap * jnp.log(x) / (1 - a), -1)
        return diffusion.gaussian_softmax_process(d, ab), post
    if kind == "onehot_gaussian":
        abc = jnp.asarray(ab, jnp.float32)

        def post(x, t):
            a = abc[t][..., None]
            return jax.nn.softmax(jnp.log(P) + 2 * jnp.sqrt(a) * x / (1 - a), -1)
        return baselines.onehot_gaussian_process(d, ab), post
    keep = jnp.asarray(baselines.d3pm_keep(ab), jnp.float32)

    def post(x, t):
        w = P * (keep[t][..., None] * x + (1 - keep[t][..., None]) / d)
        return w / jnp.sum(w, -1, keepdims=True)
    return baselines.d3pm_process(d, ab), post


@pytest.mark.parametrize("kind", diffusion.PROCESSES)
def test_nll_bound_of_a_known_label_distribution_is_close_to_its_entropy(kind):
    ab = diffusion.cosine_alpha_bar(T)
    block, post = _exact_posterior(kind, ab)
    t = jnp.tile(jnp.arange(2, T + 1), 40)             # every step, stratified
    y = jax.random.categorical(jax.random.key(1), jnp.log(P), shape=t.shape)

    @jax.jit
    def bits(key):
        onehot = jax.nn.one_hot(y, len(P))
        exact = loss.label_bound(block, T, onehot, post, key, t)
        # a model that ignores x_t (p̂ = uniform) pays far more than the entropy
        blind = loss.label_bound(block, T, onehot, lambda x, tt: jnp.full(x.shape, 0.2), key, t)
        return ({k: jnp.mean(v) / np.log(2) for k, v in exact.items()},
                sum(jnp.mean(v) for v in blind.values()) / np.log(2))

    terms, blind = bits(jax.random.key(2))
    total = sum(float(v) for v in terms.values())
    assert ENTROPY_BITS - 0.03 < total < ENTROPY_BITS + 0.12, terms
    assert float(blind) > total + 1.0


def test_discretized_gaussian_sums_to_one_over_the_bins():
    bins = 256
    centres = (jnp.arange(-400, 400) + 0.5) * (2.0 / bins)
    logp_fn = jax.jit(lambda x, m: loss.discretized_gaussian_log_prob(x, m, 0.01, bins))
    logp = logp_fn(centres, 0.013)
    assert float(jnp.sum(jnp.exp(logp))) == pytest.approx(1.0, abs=1e-5)
    far = logp_fn(jnp.array([0.9, -0.9]), 0.0)
    assert bool(jnp.all(jnp.isfinite(far))) and float(far[0]) < -1000     # stable in the tail
    q = loss.quantize(jnp.array([[0.1234, -0.999, 0.5]]), jnp.array([[1.0, 1.0, 0.0]]), bins)
    np.testing.assert_allclose(q, [[(np.floor(1.1234 * 128) + 0.5) / 128 - 1, -1 + 1 / 256, 0]],
                               atol=1e-6)


def test_training_loss_parts_and_low_t_weight():
    proc = diffusion.make_process("gaussian_softmax", 20)
    x0 = jnp.asarray(np.stack([sk.encode((sk.Primitive("line", (0, 0, 1, 1)),
                                          sk.Primitive("point", (0.5, -0.5))), 3)] * 4))

    def perfect(x, t):       # knows x₀: labels as confident logits, parameters exact
        return jnp.concatenate([20 * x0[..., :7] - 10, x0[..., 7:] + 0.1], -1)

    f = jax.jit(lambda lo: loss.training_loss(proc, perfect, x0, jax.random.key(0),
                                              low_t_max=lo, low_t_weight=16.0))
    value, parts = f(0)
    assert float(parts["ce_type"]) < 1e-6 and float(parts["ce_flag"]) < 1e-6
    assert float(parts["mse"]) == pytest.approx(0.01, rel=1e-4)          # only active columns
    _, weighted = f(20)                                                  # every t is "low"
    assert float(weighted["mse"]) == pytest.approx(0.16, rel=1e-4)
    assert float(value) == pytest.approx(float(sum(parts.values())), rel=1e-6)


def test_official_ce_normalisation_is_a_mean_over_classes_and_slots():
    # a denoiser that ignores its input: flag logits (0, log 3), type logits 0, params 0
    x0 = np.zeros((1, 2, sk.SLOT_DIM), np.float32)
    x0[0, 0, [1, 2]] = 1.0                          # slot 0: flag 1, type line
    x0[0, 1, [0, 4]] = 1.0                          # slot 1: flag 0, type arc
    x0[0, 0, 7:11] = [0.5, -0.5, 0.25, 0.0]         # the line's 4 parameters
    x0[0, 1, 14:19] = [0.1, 0.2, 0.3, 0.4, -0.2]    # the arc's 5 parameters
    raw = np.zeros_like(x0)
    raw[..., 1] = np.log(3.0)
    proc = diffusion.make_process("gaussian_softmax", 20)

    def value(ce_mean):
        out, parts = loss.training_loss(proc, lambda x, t: jnp.asarray(raw), jnp.asarray(x0),
                                        jax.random.key(0), low_t_max=0, low_t_weight=1.0,
                                        ce_mean=ce_mean)
        return float(out), parts

    # the official expression: (-log(p̂) * onehot).mean() over batch, slots and classes
    p_flag, p_type = np.array([0.25, 0.75]), np.full(5, 0.2)
    official = (np.mean(-np.log(p_flag) * x0[..., 0:2]) + np.mean(-np.log(p_type) * x0[..., 2:7])
                + (0.5 ** 2 + 0.5 ** 2 + 0.25 ** 2 + 0.01 + 0.04 + 0.09 + 0.16 + 0.04) / 9)
    got, parts = value("slots_and_classes")
    assert got == pytest.approx(official, rel=1e-6)
    assert float(parts["ce_flag"]) == pytest.approx((np.log(4 / 3) + np.log(4)) / 2 / 2, rel=1e-6)
    assert float(parts["ce_type"]) == pytest.approx(np.log(5) / 5, rel=1e-6)
    # "slots" keeps the per-slot sums: type 5x and flag 2x heavier than the official terms
    slots, p2 = value("slots")
    assert float(p2["ce_type"]) == pytest.approx(5 * float(parts["ce_type"]), rel=1e-6)
    assert float(p2["ce_flag"]) == pytest.approx(2 * float(parts["ce_flag"]), rel=1e-6)
    with pytest.raises(ValueError, match="ce_mean must be one of"):
        value("classes")


def test_both_reverse_parameterisations_bound_the_exact_nll_and_the_tighter_is_kept():
    """Labels y ~ P: under either x̂₀ parameterisation (2·log p̂, Σ p̂·u) the bound is at
    least the entropy H(P) (the exact NLL of the best model), for the exact posterior and for
    a miscalibrated one; `tightest` keeps the lower total and both sets of terms."""
    ab = diffusion.cosine_alpha_bar(T)
    d = len(P)
    _, post = _exact_posterior("gaussian_softmax", ab)
    t = jnp.tile(jnp.arange(2, T + 1), 40)
    y = jax.random.categorical(jax.random.key(3), jnp.log(P), shape=t.shape)
    onehot = jax.nn.one_hot(y, d)

    def blurred(x, tt):      # the exact posterior mixed with uniform: a worse model
        return 0.7 * post(x, tt) + 0.3 / d

    @jax.jit
    def per_label(key):
        out = {}
        for name in ("two_log_p", "embedding_mean"):
            block = diffusion.gaussian_softmax_process(d, ab, x0_logits=name)
            for label, fn in (("exact", post), ("blurred", blurred)):
                terms = loss.label_bound(block, T, onehot, fn, key, t)
                out[f"{label}:{name}/total"] = sum(terms.values()) / np.log(2)
        return out

    bits = {k: np.asarray(v) for k, v in per_label(jax.random.key(4)).items()}
    for k, v in bits.items():
        se = v.std(ddof=1) / np.sqrt(len(v))
        assert v.mean() > ENTROPY_BITS - 3 * se - 0.02, (k, v.mean(), se)
    # the Σ p̂·u bound of the exact posterior is near H(P); 2·log p̂ is far looser here
    assert bits["exact:embedding_mean/total"].mean() < ENTROPY_BITS + 0.12
    assert bits["exact:two_log_p/total"].mean() > ENTROPY_BITS + 1.0
    exact = evaluation.tightest({k.split(":")[1]: float(v.mean()) for k, v in bits.items()
                                 if k.startswith("exact:")})
    assert exact["x0_logits"] == "embedding_mean"
    assert exact["total"] == exact["by_x0_logits"]["embedding_mean"]["total"]
    assert set(exact["by_x0_logits"]) == {"two_log_p", "embedding_mean"}
    assert evaluation.tightest({"total": 3.0}) == {"total": 3.0}      # a single bound as is


def test_bound_processes_are_both_parameterisations_for_gaussian_softmax_only():
    gs = diffusion.make_process("gaussian_softmax", 20, x0_logits="two_log_p")
    procs = evaluation.bound_processes(gs)
    assert set(procs) == {"two_log_p", "embedding_mean"}
    onehot, p_hat = jnp.eye(5)[:1], jnp.array([[0.6, 0.1, 0.1, 0.1, 0.1]])
    t = jnp.array([5])
    kls = {k: float(p.type.kl(onehot, None, p_hat, t)[0]) for k, p in procs.items()}
    assert kls["two_log_p"] != pytest.approx(kls["embedding_mean"])
    assert evaluation.bound_processes(diffusion.make_process("d3pm", 20)) is None
