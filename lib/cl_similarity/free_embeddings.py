"""Freely optimised embeddings: the theorems of §5 checked without an encoder.

The 2n embeddings u_i, v_i are free vectors in R^d (normalised inside the losses) optimised
by Adam with a cosine-decayed step size; everything runs in one `lax.scan`.

    params = init_embeddings(key, n, d)                       # {"u": (n, d), "v": (n, d)}
    objective = full_batch_objective(loss)                    # Thm 5.1-5.3 setting
    objective = fixed_minibatch_objective(loss, m, λ, n)      # Thm 5.5 setting, ± VRNS
    run = optimise(objective, params, steps=4000, lr=0.05, record_every=50)
    run.final  (SimilarityStats of the last iterate), run.trace_pos / trace_neg  (T,)
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.cl_similarity import losses as L
from lib.common import optim

Params = dict


def init_embeddings(key: jax.Array, n: int, d: int) -> Params:
    """Gaussian free vectors {"u": (n, d), "v": (n, d)} (uniform directions once normalised)."""
    ku, kv = jax.random.split(key)
    return {"u": jax.random.normal(ku, (n, d)), "v": jax.random.normal(kv, (n, d))}


def full_batch_objective(loss: L.Loss) -> Callable[[Params], jax.Array]:
    """The loss over all n instances in one batch."""
    return lambda p: L.contrastive_loss(loss, p["u"], p["v"])


def fixed_minibatch_objective(loss: L.Loss, m: int, aux_weight: float = 0.0,
                              num_data: int | None = None) -> Callable[[Params], jax.Array]:
    """Mean over the b = n/m fixed batches {0..m−1}, {m..2m−1}, … of loss + λ·L_VRNS.

    L_VRNS inside each batch targets −1/(num_data − 1) (default: n, the number of free
    instances), as in Def. 5.7.
    """
    def objective(p):
        n, d = p["u"].shape
        if n % m:
            raise ValueError(f"batch size m = {m} must divide n = {n}")
        u, v = p["u"].reshape(n // m, m, d), p["v"].reshape(n // m, m, d)
        per = jax.vmap(lambda a, b: L.contrastive_loss(loss, a, b, aux_weight=aux_weight,
                                                       num_data=num_data or n))(u, v)
        return jnp.mean(per)

    return objective


class FreeRun(NamedTuple):
    params: Params
    final: L.SimilarityStats
    trace_pos: jax.Array    # (T,) mean positive cosine every `record_every` steps
    trace_neg: jax.Array    # (T,) mean cross-view negative cosine
    trace_loss: jax.Array   # (T,)


def optimise(objective: Callable[[Params], jax.Array], params: Params, *, steps: int,
             lr: float, record_every: int = 50) -> FreeRun:
    """Adam on `objective` for `steps` steps (cosine decay of the step size to lr/1000)."""
    if steps % record_every:
        raise ValueError(f"steps = {steps} must be a multiple of record_every = {record_every}")
    opt = optax.adam(optax.cosine_decay_schedule(lr, steps, alpha=1e-3))

    def chunk(carry, _):
        carry, values = optim.descend(objective, *carry, opt, record_every)
        st = L.similarity_stats(carry[0]["u"], carry[0]["v"])
        return carry, (st.pos_mean, st.neg_mean, values[-1])

    @jax.jit
    def run(p):
        (p, _), (tp, tn, tl) = jax.lax.scan(chunk, (p, opt.init(p)), None,
                                            length=steps // record_every)
        return p, tp, tn, tl

    p, tp, tn, tl = run(params)
    return FreeRun(p, L.similarity_stats(p["u"], p["v"]), tp, tn, tl)
