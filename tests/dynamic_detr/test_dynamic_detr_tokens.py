"""Token selection / aggregation: keep ratio 1 reproduces the dense encoder, aggregation
conserves token weight and merges to the right places, quotas follow the importance."""
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.dynamic_detr import model as M, objectives, spec as S, tokens as tk


@pytest.fixture(scope="module")
def tiny_model():
    """A 2-level detector, its params and the backbone tokens (x0, pos) of two images."""
    det = M.Detector(32, 3, widths=(8, 8), dim=16, heads=2, enc_layers=2, dec_layers=1, num_queries=5)
    images = jax.random.uniform(jax.random.key(1), (2, 32, 32, 3))
    params = jax.jit(det.init)(jax.random.key(0), images)
    x0, pos = jax.jit(functools.partial(det.apply, method=M.Detector.tokens))(params, images)
    return det, params, x0, pos


def _encode(det, spec, params, x0, pos):
    """The encoder of `det` with `spec` (the decoder reads only its memory)."""
    var = M.Detector(**{**_fields(det), "spec": spec})
    return jax.jit(functools.partial(var.apply, method=M.Detector.encode))(params, x0, pos)


@pytest.fixture(scope="module")
def dense_out(tiny_model):
    det, params, x0, pos = tiny_model
    return _encode(det, S.EncoderSpec(), params, x0, pos)


def _spec(method, budget, **kw):
    return S.make_spec(method, budget, num_blocks=2, num_levels=2, cascade=(1.0, 1.0),
                       focus_level_weights=(1.0, 2.0), fine_levels=1, **kw)


@pytest.mark.parametrize("method,holistic", [("topk", "context"), ("focus", "context"),
                                             ("dynamic", "context"), ("dynamic", "kept")])
def test_keep_ratio_one_equals_dense(tiny_model, dense_out, method, holistic):
    det, params, x0, pos = tiny_model
    dense = dense_out
    sparse = _encode(det, _spec(method, 1.0, holistic=holistic), params, x0, pos)
    assert sparse["tokens"].shape == dense["tokens"].shape
    # equal memory: the decoder, which reads only the memory, gives equal detections
    np.testing.assert_allclose(sparse["memory"], dense["memory"], atol=2e-5)
    np.testing.assert_allclose(sparse["size"], 1.0, atol=1e-6)


def test_sparse_encoder_keeps_budget_and_weight(tiny_model):
    """Dynamic (proximal + context) conserves every token's weight; top-k drops tokens."""
    det, params, x0, pos = tiny_model
    n = 64 + 16
    sp = S.make_spec("dynamic", 0.4, num_blocks=2, num_levels=2, cascade=(1.25, 0.75),
                     focus_level_weights=(1.0, 1.0), fine_levels=1)
    assert sp.modes == ("proximal", "context")
    out = _encode(det, sp, params, x0, pos)
    assert out["tokens"].shape[1] == round(0.4 * 0.75 * n)            # context slot included
    np.testing.assert_allclose(out["size"].sum(-1), n, rtol=1e-5)     # every token aggregated
    ptr = np.asarray(out["ptr"])
    assert (ptr >= 0).all()
    # the last slot is the coarse level's context slot: it stands for the tokens pointing
    # to it, has no original token (orig -1) and objectness target 0
    assert ((ptr == out["size"].shape[1] - 1).sum(-1) == np.asarray(out["size"])[:, -1]).all()
    for _, orig in out["scores"][1:]:
        assert (np.asarray(orig)[:, -1] == -1).all() and (np.asarray(orig)[:, :-1] >= 0).all()
        target = np.asarray(objectives.objectness_target(jnp.ones((2, n)), orig))
        assert (target[:, -1] == 0).all() and (target[:, :-1] == 1).all()
    # no_unmerge: the encoder is the same; only tokens still in their own slot get updates,
    # merged and pooled ones keep x0 in the memory
    nu = _encode(det, S.make_spec("dynamic", 0.4, num_blocks=2, num_levels=2, cascade=(1.25, 0.75),
                                  focus_level_weights=(1.0, 1.0), fine_levels=1,
                                  ablation="no_unmerge"), params, x0, pos)
    np.testing.assert_allclose(nu["tokens"], out["tokens"], atol=1e-6)
    mem, mem_nu, x0n = np.asarray(out["memory"]), np.asarray(nu["memory"]), np.asarray(x0)
    own = np.abs(mem_nu - x0n).max(-1) > 1e-6          # in its own slot in some block
    assert (own.sum(-1) <= round(0.4 * 1.25 * n) - 1).all()           # block 0's selection
    same = own & (np.abs(mem_nu - mem).max(-1) < 1e-6)  # kept throughout: the same memory
    assert (same.sum(-1) >= 1).all() and (same.sum(-1) <= out["tokens"].shape[1] - 1).all()
    merged = (~own) & (np.abs(mem - x0n).max(-1) > 1e-6)              # merged at block 0
    assert merged.sum() > 0
    drop = S.make_spec("topk", 0.4, num_blocks=2, num_levels=2, cascade=(1.0, 1.0),
                       focus_level_weights=(1.0, 1.0), fine_levels=1)
    out = _encode(det, drop, params, x0, pos)
    np.testing.assert_allclose(out["size"].sum(-1), round(0.4 * n))   # dropped tokens vanish
    # dropped tokens keep their backbone features in the memory
    dropped = np.asarray(out["ptr"]) < 0
    np.testing.assert_allclose(np.asarray(out["memory"])[dropped], np.asarray(x0)[dropped])


def _fields(det):
    return {f: getattr(det, f) for f in ("image_size", "num_classes", "widths", "dim", "heads",
                                          "enc_layers", "dec_layers", "num_queries")}


@functools.partial(jax.jit, static_argnames=("modes", "k", "allocation"))
def _pipeline(score, level, centre, feat, size, *, modes, k, allocation="mass"):
    """Quota, selection, the dense reference merge and the encoder's fast merge, jitted once."""
    valid = jnp.ones(level.shape, bool)
    quota = tk.level_quota(jax.nn.sigmoid(score), level, valid, k, 2, allocation)
    idx = tk.select(score, level, valid, quota, k)
    m = tk.merge_matrix(idx, level, centre, feat, modes, valid)
    x_ref, s_ref = tk.aggregate(m, feat, size)
    x, s, hmap = tk.merge_tokens(idx, level, centre, feat, size, modes)
    return {"idx": idx, "m": m, "x_ref": x_ref, "s_ref": s_ref, "x": x, "s": s, "hmap": hmap,
            "hard_map": tk.hard_map(m)}


def _random_tokens(seed, b=2, n=12, d=5, levels=2):
    rng = np.random.default_rng(seed)
    level = np.sort(rng.integers(0, levels, size=(b, n)), axis=1)
    return (jnp.asarray(rng.normal(size=(b, n))), jnp.asarray(level),
            jnp.asarray(rng.uniform(size=(b, n, 2))), jnp.asarray(rng.normal(size=(b, n, d))),
            jnp.asarray(rng.uniform(0.5, 3.0, size=(b, n))))


@pytest.mark.parametrize("modes", [("proximal", "holistic"), ("holistic", "holistic"), ("proximal", "proximal"),
                                   ("proximal", "context"), ("context", "context"), ("drop", "holistic"),
                                   ("proximal", "drop")])
def test_aggregation_conserves_weight_and_fast_merge_equals_reference(modes):
    """Without "drop", rows of M sum to 1, so total size and size-weighted feature mass are
    conserved; the encoder's fast merge equals the dense-matrix reference in every mode."""
    score, level, centre, feat, size = _random_tokens(7, n=16)
    r = _pipeline(score, level, centre, feat, size, modes=modes, k=6)
    np.testing.assert_allclose(r["s"], r["s_ref"], rtol=1e-5)
    np.testing.assert_allclose(r["x"], r["x_ref"], atol=1e-5)
    np.testing.assert_array_equal(r["hmap"], r["hard_map"])
    if "drop" in modes:
        return
    np.testing.assert_allclose(r["m"].sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(r["s_ref"].sum(-1), size.sum(-1), rtol=1e-6)
    np.testing.assert_allclose(r["s"].sum(-1), size.sum(-1), rtol=1e-6)
    np.testing.assert_allclose((r["x_ref"] * r["s_ref"][..., None]).sum(1),
                               (feat * size[..., None]).sum(1), atol=1e-5)


def test_proximal_merges_into_nearest_kept_token_of_its_level():
    score, level, centre, feat, size = _random_tokens(3, n=14)
    r = _pipeline(score, level, centre, feat, size, modes=("proximal", "proximal"), k=6,
                  allocation="global")
    m, idx = np.asarray(r["m"]), np.asarray(r["idx"])
    level, centre = np.asarray(level), np.asarray(centre)
    for b in range(2):
        for i in range(level.shape[1]):
            if i in idx[b]:
                assert m[b, i, list(idx[b]).index(i)] == 1.0
                continue
            same = [k for k, j in enumerate(idx[b]) if level[b, j] == level[b, i]]
            cands = same or list(range(len(idx[b])))
            d = [((centre[b, i] - centre[b, idx[b, k]]) ** 2).sum() for k in cands]
            assert m[b, i].argmax() == cands[int(np.argmin(d))] and m[b, i].sum() == 1.0


def test_holistic_merge_weights_follow_similarity():
    feat = jnp.asarray([[[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]]])
    level = jnp.zeros((1, 3), jnp.int32)
    mm = jax.jit(functools.partial(tk.merge_matrix, modes=("holistic",), temperature=0.1))
    m = mm(jnp.asarray([[0, 1]]), level, jnp.zeros((1, 3, 2)), feat, valid=jnp.ones((1, 3), bool))
    f = np.asarray(feat[0, 2]) / np.linalg.norm(feat[0, 2])
    logits = np.array([f @ [1.0, 0.0], f @ [0.0, 1.0]]) / 0.1
    expect = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(m[0, 2], expect, rtol=1e-4, atol=1e-6)
    x2, s2 = jax.jit(tk.aggregate)(m, feat, jnp.ones((1, 3)))
    np.testing.assert_allclose(s2[0], 1.0 + expect, rtol=1e-4, atol=1e-6)


def test_mass_quota_is_proportional_to_importance_mass():
    prob = jnp.asarray([[0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]])
    level = jnp.asarray([[0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
    valid = jnp.ones(level.shape, bool)
    quota = jax.jit(tk.level_quota, static_argnums=(3, 4, 5))
    q = np.asarray(quota(prob, level, valid, 6, 2, "mass"))[0]
    share = np.array([2.7, 0.9]) / 3.6
    np.testing.assert_array_equal(q, np.minimum(np.floor(share * 6), [3, 9]))
    q = np.asarray(quota(prob, level, valid, 6, 2, "count"))[0]
    np.testing.assert_array_equal(q, [1, 4])                  # floor(6·3/12), floor(6·9/12)
    select = jax.jit(tk.select, static_argnums=(4,))
    idx = np.asarray(select(jnp.log(prob / (1 - prob)), level, valid, jnp.asarray([[0, 4]]), 6))[0]
    assert len(set(idx)) == 6 and (np.asarray(level)[0, idx] == 1).sum() >= 4


def test_rank_in_level_matches_sorting():
    score, level, *_ = _random_tokens(5, n=10, levels=3)
    r = np.asarray(jax.jit(tk.rank_in_level)(score, level))
    for b, i in itertools.product(range(2), range(10)):
        same = np.asarray(level)[b] == np.asarray(level)[b, i]
        assert r[b, i] == (np.asarray(score)[b][same] > np.asarray(score)[b, i]).sum()


def test_center_distance_zero_iff_tokens_are_teacher_centroids():
    teacher = jnp.asarray(np.random.default_rng(0).normal(size=(1, 4, 3)))
    ptr = jnp.asarray([[0, 0, 1, -1]])
    centroids = jnp.stack([teacher[0, :2].mean(0), teacher[0, 2]])[None]
    assert float(objectives.center_distance(centroids, ptr, teacher)) < 1e-12
    shifted = centroids + jnp.asarray([[[1.0, 0, 0], [0, 0, 0]]])
    # (n_0 = 2) · 1² / (D = 3 · Σn = 3)
    np.testing.assert_allclose(objectives.center_distance(shifted, ptr, teacher), 2 / 9, rtol=1e-6)


def test_fast_merge_static_holistic_rows():
    """At the first block tokens are level-major, so a row range covers the holistic level."""
    score, _, centre, feat, size = _random_tokens(8, n=16)
    level = jnp.asarray(np.repeat([[0] * 10 + [1] * 6], 2, axis=0))
    f = jax.jit(functools.partial(tk.merge_tokens, modes=("proximal", "holistic")),
                 static_argnames=("holistic_rows",))
    idx = jnp.asarray([[0, 3, 5, 10, 12], [1, 2, 9, 14, 15]])
    full = f(idx, level, centre, feat, size)
    rows = f(idx, level, centre, feat, size, holistic_rows=(10, 16))
    for a, b in zip(full, rows):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_context_slot_pools_the_dropped_tokens_of_its_level():
    """Holistic aggregation ("context"): a coarse level's dropped tokens go, size-weighted,
    into that level's one context slot after the kept ones; kept tokens stay unchanged."""
    score, _, centre, feat, size = _random_tokens(9, n=16)
    level = jnp.asarray(np.repeat([[0] * 10 + [1] * 6], 2, axis=0))
    idx = jnp.asarray([[0, 3, 5, 10, 12], [1, 2, 9, 14, 15]])
    x, s, hmap = jax.jit(functools.partial(tk.merge_tokens, modes=("drop", "context")))(
        idx, level, centre, feat, size)
    assert x.shape == (2, 6, 5) and s.shape == (2, 6)
    feat, size, idx = np.asarray(feat), np.asarray(size), np.asarray(idx)
    for b in range(2):
        pooled = [i for i in range(10, 16) if i not in idx[b]]
        np.testing.assert_allclose(s[b, 5], size[b, pooled].sum(), rtol=1e-6)
        np.testing.assert_allclose(x[b, 5], (feat[b, pooled] * size[b, pooled, None]).sum(0)
                                   / size[b, pooled].sum(), atol=1e-5)
        np.testing.assert_allclose(x[b, :5], feat[b, idx[b]], atol=1e-6)   # not diluted
        np.testing.assert_allclose(s[b, :5], size[b, idx[b]], rtol=1e-6)
        assert (np.asarray(hmap)[b, pooled] == 5).all()
        dropped = [i for i in range(10) if i not in idx[b]]                 # level 0: "drop"
        assert (np.asarray(hmap)[b, dropped] == -1).all()


def test_slot_mean_is_the_size_weighted_mean_per_slot():
    values = jnp.asarray([[[1.0, 0.0], [3.0, 2.0], [5.0, 4.0], [7.0, 7.0]]])
    hmap = jnp.asarray([[1, 1, -1, 0]])
    size = jnp.asarray([[1.0, 3.0, 2.0, 2.0]])
    m = np.asarray(tk.slot_mean(values, hmap, size, 3))
    np.testing.assert_allclose(m[0], [[7.0, 7.0], [2.5, 1.5], [0.0, 0.0]])   # slot 2 empty
