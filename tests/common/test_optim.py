"""lib.common.optim: the optimiser block reproduces each former builder bit for bit (their
chains are written out here as references), minimize/descend against closed forms, errors."""
from __future__ import annotations

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lib.common import optim


def _params():
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"w": jax.random.normal(k1, (3, 4)), "b": {"c": jax.random.normal(k2, (4,))}}


def _trace(opt, steps):
    """Every step's updates (flattened) for fixed pseudo-random gradients and parameters."""
    params = _params()
    state = opt.init(params)
    out = []
    for s in range(steps):
        grads = jax.tree.map(lambda p: jax.random.normal(jax.random.key(s + 1), p.shape) * 3.0,
                             params)
        upd, state = opt.update(grads, state, params)
        params = optax.apply_updates(params, upd)
        out.append(np.concatenate([np.ravel(u) for u in jax.tree.leaves(upd)]))
    return np.stack(out), jax.tree.structure(state)


def assert_same(new, ref, steps):
    (a, sa), (b, sb) = _trace(new, steps), _trace(ref, steps)
    assert sa == sb                      # same opt_state tree: old checkpoints restore
    np.testing.assert_array_equal(a, b)


# ---- the five former builders, as they were written ------------------------------------

def sft_ref(lr, num_steps, warmup_steps, weight_decay, grad_clip):       # lib/lm/sft.py
    warmup = min(warmup_steps, max(num_steps - 1, 0))
    schedule = optax.warmup_cosine_decay_schedule(0.0 if warmup else lr, lr, max(warmup, 1),
                                                  max(num_steps, 2), end_value=lr * 0.1)
    return optax.chain(optax.clip_by_global_norm(grad_clip),
                       optax.adamw(schedule, weight_decay=weight_decay))


def gmflow_ref(lr, num_steps, warmup, grad_clip=10.0):                    # lib/gmflow/training.py
    warmup = min(warmup, max(num_steps - 1, 0))
    schedule = optax.warmup_cosine_decay_schedule(0.0, lr, max(warmup, 1), max(num_steps, 2),
                                                  end_value=0.1 * lr)
    return optax.chain(optax.clip_by_global_norm(grad_clip),
                       optax.adamw(schedule, 0.9, 0.99, weight_decay=0.0))


def ssl_ref(optimizer, peak, weight_decay, warmup_epochs, num_steps, spe):  # cl_similarity/training
    warm = min(warmup_epochs * spe, max(num_steps - 1, 0))
    sched = optax.warmup_cosine_decay_schedule(0.0, peak, warm, num_steps)
    if optimizer == "sgd":
        return optax.chain(optax.add_decayed_weights(weight_decay), optax.sgd(sched, momentum=0.9))
    return optax.adamw(sched, weight_decay=weight_decay)


def sketch_ref(lr, num_steps, warmup, grad_clip, constant=False):        # lib/sketchdnn/training
    if constant:
        schedule = optax.constant_schedule(lr)
    else:
        warmup = min(warmup, max(num_steps - 1, 0))
        schedule = optax.warmup_cosine_decay_schedule(0.0, lr, max(warmup, 1),
                                                      max(num_steps, 2), end_value=0.1 * lr)
    return optax.chain(optax.clip_by_global_norm(grad_clip), optax.adam(schedule))


def multipdenet_ref(lr, end_lr_factor, warmup_steps, weight_decay, grad_clip, steps):
    warmup = min(warmup_steps, steps - 1)                                  # experiments/multipdenet
    sched = optax.warmup_cosine_decay_schedule(0.0, lr, warmup, steps, end_value=lr * end_lr_factor)
    return optax.chain(optax.clip_by_global_norm(grad_clip),
                       optax.adamw(sched, weight_decay=weight_decay))


@pytest.mark.parametrize("warmup,steps", [(3, 10), (20, 8)])
def test_sft_block(warmup, steps):
    from lib.lm import sft
    block = dict(name="adamw", lr=3e-2, schedule="cosine", warmup=warmup, end_lr_factor=0.1,
                 clip=0.5, weight_decay=0.01)
    ref = sft_ref(3e-2, steps, warmup, 0.01, 0.5)
    assert_same(optim.make_optimizer(block, steps), ref, steps)
    assert_same(sft.make_optimizer(3e-2, steps, warmup_steps=warmup, weight_decay=0.01,
                                   grad_clip=0.5), ref, steps)


def test_gmflow_block():
    from lib.gmflow import training
    block = dict(name="adamw", lr=1e-2, schedule="cosine", warmup=4, end_lr_factor=0.1,
                 clip=10.0, b2=0.99)
    assert_same(optim.make_optimizer(block, 12), gmflow_ref(1e-2, 12, 4), 12)
    assert_same(optim.make_optimizer(training.optimizer_block(1e-2, 4), 12), gmflow_ref(1e-2, 12, 4), 12)


@pytest.mark.parametrize("name,warmup_epochs", [("sgd", 2), ("adam", 1), ("sgd", 0)])
def test_ssl_block(name, warmup_epochs):
    from lib.cl_similarity import training
    spe, steps = 3, 12
    block = dict(name="sgd" if name == "sgd" else "adamw", lr=0.3, schedule="cosine",
                 warmup=warmup_epochs * spe, weight_decay=1e-4)
    ref = ssl_ref(name, 0.3, 1e-4, warmup_epochs, steps, spe)
    assert_same(optim.make_optimizer(block, steps), ref, steps)
    spec = training.RunSpec(batch_size=256, epochs=4, loss=None, aux_weight=0.0, optimizer=name,
                            base_lr=0.3, lr_scaling="none", weight_decay=1e-4,
                            warmup_epochs=warmup_epochs, augment=None, net=None, seed=0)
    assert_same(optim.make_optimizer(training.optimizer_block(spec, spe), steps), ref, steps)


@pytest.mark.parametrize("constant", [False, True])
def test_sketchdnn_block(constant):
    from lib.sketchdnn import training
    block = dict(name="adam", lr=1e-2, schedule="constant" if constant else "cosine",
                 warmup=0 if constant else 3, end_lr_factor=0.1, clip=1.0)
    ref = sketch_ref(1e-2, 10, 3, 1.0, constant)
    assert_same(optim.make_optimizer(block, 10), ref, 10)
    assert_same(optim.make_optimizer(training.optimizer_block(1e-2, 3, 1.0, constant), 10), ref, 10)


@pytest.mark.parametrize("warmup", [0, 4])
def test_multipdenet_block(warmup):
    block = dict(name="adamw", lr=1e-2, schedule="cosine", warmup=warmup, end_lr_factor=0.05,
                 clip=1.0, weight_decay=1e-3)
    ref = multipdenet_ref(1e-2, 0.05, warmup, 1e-3, 1.0, 10)
    assert_same(optim.make_optimizer(block, 10), ref, 10)
    import ml_collections
    from lib.multipdenet import training as train
    config = ml_collections.ConfigDict(dict(
        optim=dict(lr=1e-2, end_lr_factor=0.05, warmup=warmup, weight_decay=1e-3,
                   clip=1.0), train=dict(num_steps=10)))
    assert_same(optim.make_optimizer(train.optim_block(config), 10), ref, 10)


# earth, dsl, cades (constant rate) and fleg3d (warm-up + cosine) built optax by hand from
# their blocks until session 12; the block gives the same updates. With a constant rate the
# block holds optax.constant_schedule (a step count in opt_state, as SketchDNN recorded), so
# those three papers' older checkpoints no longer restore: refused as CheckpointMismatch.
@pytest.mark.parametrize("block,ref,same_tree", [
    (dict(name="adamw", lr=1e-3, clip=1.0, weight_decay=1e-4),
     lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3, weight_decay=1e-4)),
     False),                                                                     # earth
    (dict(name="adamw", lr=1e-2, weight_decay=0.0, clip=0.0),
     lambda: optax.adamw(1e-2, weight_decay=0.0), False),                        # dsl
    (dict(name="adam", lr=1e-3, clip=5.0),
     lambda: optax.chain(optax.clip_by_global_norm(5.0), optax.adam(1e-3)), False),  # cades
    (dict(name="adam", lr=1e-3, schedule="cosine", warmup=3),
     lambda: optax.adam(optax.warmup_cosine_decay_schedule(0.0, 1e-3, 3, 20)), True),  # fleg3d
])
def test_former_hand_built_optimisers_give_the_same_updates(block, ref, same_tree):
    (new, tree_new), (old, tree_old) = _trace(optim.make_optimizer(block, 20), 12), _trace(ref(), 12)
    np.testing.assert_array_equal(new, old)
    assert (tree_new == tree_old) is same_tree


def test_sft_without_warmup_keeps_its_recorded_schedule():
    """sft's warmup = 0 holds lr for step 0, then decays to lr/10 over num_steps - 1 steps
    (the schedule SWE-Gym's and EditLord's recorded fine-tunes followed): the block
    reproduces it with warmup = 1 from warmup_from = 1."""
    from lib.lm import sft
    lr, n = 1e-2, 6
    ref = sft_ref(lr, n, 0, 0.0, 1e9)
    assert_same(sft.make_optimizer(lr, n, warmup_steps=0, grad_clip=1e9), ref, n)
    opt = sft.make_optimizer(lr, n, warmup_steps=0, grad_clip=1e9)
    params = {"w": jnp.zeros(3)}
    state = opt.init(params)
    for s in range(n):
        upd, state = opt.update({"w": jnp.ones(3)}, state, params)
        # Adam's first-moment/second-moment ratio is 1 for constant unit gradients
        k = max(s - 1, 0)
        rate = lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * k / (n - 1))))
        np.testing.assert_allclose(upd["w"], -rate, rtol=1e-4)


def test_cosine_schedule_closed_form():
    """Linear warm-up from 0 over `warmup` steps, then lr·(f + (1 − f)·½(1 + cos πt/T))."""
    lr, f, w, n = 0.2, 0.1, 4, 14
    sched = optim.make_schedule(dict(lr=lr, schedule="cosine", warmup=w, end_lr_factor=f), n)
    for s in range(n + 1):
        if s < w:
            want = lr * s / w
        else:
            want = lr * (f + (1 - f) * 0.5 * (1 + math.cos(math.pi * (s - w) / (n - w))))
        assert float(sched(s)) == pytest.approx(want, rel=1e-6, abs=1e-9)
    no_warm = optim.make_schedule(dict(lr=lr, schedule="cosine"), n)
    assert float(no_warm(0)) == pytest.approx(lr)


def test_constant_schedule_warms_up_linearly_then_holds():
    """"constant" with a warm-up (Dynamic DETR's time-budget runs): lr · (from + (1 − from)·s/w)
    for s < w, then lr to the end; the warm-up is cut to num_steps − 1."""
    lr, w = 2e-3, 8
    for f in (0.0, 0.25):
        sched = optim.make_schedule(dict(lr=lr, schedule="constant", warmup=w, warmup_from=f), 100)
        for s in (0, 3, w - 1, w, 50, 99, 500):
            want = lr * (f + (1 - f) * s / w) if s < w else lr
            assert float(sched(s)) == pytest.approx(want, rel=1e-6, abs=1e-12)
    short = optim.make_schedule(dict(lr=lr, schedule="constant", warmup=w), 4)
    assert float(short(0)) == 0.0 and float(short(3)) == pytest.approx(lr)
    assert float(optim.make_schedule(dict(lr=lr, schedule="constant"), 10)(0)) == lr


def test_block_errors():
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['warmup_steps'\]"):
        optim.make_optimizer(dict(lr=1e-3, warmup_steps=3), 10)
    with pytest.raises(ValueError, match="lr is missing"):
        optim.make_optimizer(dict(name="adam"), 10)
    with pytest.raises(ValueError, match="optim.name = 'lamb'"):
        optim.make_optimizer(dict(name="lamb", lr=1e-3), 10)
    with pytest.raises(ValueError, match="'adam' has no weight decay"):
        optim.make_optimizer(dict(name="adam", lr=1e-3, weight_decay=0.1), 10)


def test_optim_rules_validate_a_block():
    from lib.common import config as config_lib
    import ml_collections
    c = ml_collections.ConfigDict({"optim": dict(optim.DEFAULTS, lr=1e-3)})
    config_lib.validate(c, optim.optim_rules())
    c.optim.schedule = "step"
    with pytest.raises(config_lib.ConfigError, match="optim.schedule"):
        config_lib.validate(c, optim.optim_rules())


# ---- init_state, minimize, descend ---------------------------------------------------

def test_init_state():
    opt = optax.adam(1e-3)
    state = optim.init_state(_params(), opt)
    assert set(state) == {"params", "opt_state", "step"}
    assert state["step"].dtype == jnp.int32 and int(state["step"]) == 0
    assert jax.tree.structure(state["opt_state"]) == jax.tree.structure(opt.init(_params()))


def test_minimize_quadratic_closed_form():
    """SGD with rate η on ‖p − c‖²: p_T = c + (1 − 2η)^T (p_0 − c); loss_t at p_t."""
    c, p0, eta, steps = jnp.array([1.0, -2.0]), jnp.array([3.0, 0.5]), 0.1, 7
    p, losses = jax.jit(lambda p: optim.minimize(lambda q: jnp.sum((q - c) ** 2), p,
                                                 optax.sgd(eta), steps))(p0)
    np.testing.assert_allclose(p, c + (1 - 2 * eta) ** steps * (p0 - c), rtol=1e-6)
    want = [float(jnp.sum(((1 - 2 * eta) ** t * (p0 - c)) ** 2)) for t in range(steps)]
    np.testing.assert_allclose(losses, want, rtol=1e-5)


def test_minimize_xs_and_aux():
    """loss_fn(p, x) sees the step's slice of xs; aux is stacked over steps."""
    xs = jnp.arange(5.0)
    p, (losses, aux) = optim.minimize(lambda p, x: ((p - x) ** 2, x * 2), jnp.float32(0.0),
                                      optax.sgd(0.5), 5, xs=xs, has_aux=True)
    # η = 0.5 on (p − x)²: p jumps to x each step
    assert float(p) == 4.0
    np.testing.assert_array_equal(aux, 2 * xs)
    np.testing.assert_allclose(losses, [0.0, 1.0, 1.0, 1.0, 1.0])


def test_descend_in_chunks_equals_one_run():
    """Two descends of 3 and 4 steps, continuing the state, end where one of 7 does."""
    opt = optax.adam(optax.cosine_decay_schedule(0.1, 7))
    loss = lambda p: jnp.sum(jnp.sin(p["w"]) ** 2) + jnp.sum(p["b"]["c"] ** 4)
    p0 = _params()
    whole, trace = optim.minimize(loss, p0, opt, 7)
    (p, s), t1 = optim.descend(loss, p0, opt.init(p0), opt, 3)
    (p, s), t2 = optim.descend(loss, p, s, opt, 4)
    for a, b in zip(jax.tree.leaves(whole), jax.tree.leaves(p)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(trace, np.concatenate([t1, t2]))


# ---- renamed keys: one name (`lr`) per concept ---------------------------------------

OLD_NAMES = {   # config file: (new dotted key, old dotted key)
    "configs/dsl/dsl.py": [("optim.dsl.lr", "optim.lr_dsl"), ("optim.mlp.lr", "optim.lr_mlp")],
    "configs/anova_tpnn/anova_tpnn.py": [("optim.tpnn.lr", "optim.lr.tpnn")],
    "configs/cades/cades.py": [("hawkes.lr", "hawkes.learning_rate")],
}


def _move(d: dict, src: str, dst: str) -> None:
    *head, last = src.split(".")
    node = d
    for k in head:
        node = node[k]
    value = node.pop(last)
    *head, last = dst.split(".")
    node = d
    for k in head:
        node = node.setdefault(k, {})
    node[last] = value


@pytest.mark.parametrize("path", sorted(OLD_NAMES))
def test_workdir_with_the_old_key_names_is_refused_naming_them(path, tmp_path):
    from lib.common import config as config_lib, workdir as wd
    new = config_lib.to_json_dict(config_lib.load_config(f"{path}:tiny"))
    old = json.loads(json.dumps(new))
    for new_key, old_key in OLD_NAMES[path]:
        _move(old, new_key, old_key)
    wd.prepare(str(tmp_path), old)
    with pytest.raises(config_lib.WorkdirError) as err:
        wd.prepare(str(tmp_path), new)
    for new_key, old_key in OLD_NAMES[path]:
        assert old_key in str(err.value) and new_key in str(err.value)
