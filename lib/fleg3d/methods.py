"""The incremental learners compared: 3D-FLEG (and its ablations / FILP-3D-like), NCM
prototypes, text-only zero-shot, and fine-tuning. All implement `protocol.Method`.

The first three use a frozen base-trained network, whose embeddings of every bank row are
computed once (`emb = {"z": (M, D), "e": (M, D)}`); a session then costs a few means.
Fine-tuning keeps training the network on each session's shots (that is how it forgets).
"""
from __future__ import annotations

import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim
from lib.fleg3d import scoring


def _unit(x):
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-8)


class PromptPrototype:
    """Scoring eq. (4) of `lib.fleg3d.scoring` on frozen embeddings.

    mode "prompt+proto": s = u·t' + γ u·p (3D-FLEG; with e ≡ 0 the FILP-3D-like variant)
    mode "proto":        s = u·p         (nearest class mean)
    mode "text":         s = u·t         (text-only zero-shot: new classes use no shots)
    `calibrate` (prompt+proto only) subtracts each class's mean score over its own support,
    eq. (5) of `lib.fleg3d.scoring`.
    """

    def __init__(self, emb: dict, text: np.ndarray, mode: str, proto_weight: float = 1.0,
                 calibrate: bool = False):
        if mode not in ("prompt+proto", "proto", "text"):
            raise ValueError(f"unknown mode {mode!r}")
        self.u = _unit(_unit(emb["z"]) + emb["e"])
        self.e, self.text, self.mode, self.gamma = emb["e"], text, mode, proto_weight
        self.calibrate = calibrate

    def init(self):
        c, d = self.text.shape
        return {"e_mean": np.zeros((c, d), np.float32), "proto": np.zeros((c, d), np.float32),
                "offset": np.zeros(c, np.float32)}

    def _class_scores(self, state, u, classes):
        prompts = _unit(self.text[classes] + state["e_mean"][classes])
        return u @ prompts.T + self.gamma * u @ state["proto"][classes].T

    def learn(self, state, session):
        state = {k: v.copy() for k, v in state.items()}
        for c in session.classes:
            rows = session.support[session.labels == c]
            state["e_mean"][c] = self.e[rows].mean(0)
            state["proto"][c] = _unit(self.u[rows].mean(0))
            if self.calibrate and self.mode == "prompt+proto":      # eq. (5) of scoring
                state["offset"][c] = self._class_scores(state, self.u[rows], [c]).mean()
        return state

    def predict(self, state, rows, seen):
        seen = np.asarray(seen)
        u = self.u[rows]
        if self.mode == "text":
            s = u @ self.text[seen].T
        elif self.mode == "proto":
            s = u @ state["proto"][seen].T
        else:
            s = self._class_scores(state, u, seen) - state["offset"][seen]
        return seen[np.argmax(s, axis=1)]


class FineTune:
    """Fine-tuning baseline: the base-trained (FILP-3D-like) network, classifier = cosine
    to the text prompts of the seen classes; each new session trains every parameter on
    that session's shots only (`steps` full-batch Adam steps, CE over the seen classes)."""

    def __init__(self, model: nn.Module, params, bank_points, bank_desc, text, *,
                 steps: int, lr: float, temperature: float, batch: int = 128):
        self.model, self.params, self.text = model, params, jnp.asarray(text)
        self.points, self.desc = bank_points, bank_desc
        self.steps, self.lr, self.temperature, self.batch = steps, lr, temperature, batch

    def init(self):
        return {"params": self.params, "seen": ()}

    def learn(self, state, session):
        seen = state["seen"] + session.classes
        if session.index == 0:                       # base session: the base-trained network
            return {"params": state["params"], "seen": seen}
        mask = np.zeros(self.text.shape[0], bool)
        mask[list(seen)] = True
        rows = session.support
        fit = _fine_tune_fn(self.model, self.text, self.steps, self.lr, self.temperature)
        params = fit(state["params"], jnp.asarray(self.points[rows]),
                     jnp.asarray(self.desc[rows]), jnp.asarray(session.labels),
                     jnp.asarray(mask))
        return {"params": params, "seen": seen}

    def predict(self, state, rows, seen):
        seen = np.asarray(seen)
        z = _chunked(lambda p, d: {"z": _embed_z(state["params"], p, d, model=self.model)},
                     self.points[rows], self.desc[rows], self.batch, fixed=True)["z"]
        return seen[np.argmax(z @ np.asarray(self.text)[seen].T, axis=1)]


# Module-level jits with the (hashable) Flax module static, so a rerun in the same process
# reuses the compiled functions.

@functools.partial(jax.jit, static_argnames=("model",))
def _apply(params, points, desc, *, model):
    return model.apply(params, points, desc)


@functools.partial(jax.jit, static_argnames=("model",))
def _embed_z(params, points, desc, *, model):
    return scoring.normalise(model.apply(params, points, desc)["z"])


_FIT: dict = {}


def _fine_tune_fn(model: nn.Module, text: jnp.ndarray, steps: int, lr: float,
                  temperature: float):
    """The jitted fit(params, x, d, y, seen_mask) -> params: `steps` full-batch Adam steps on
    CE(cos(z, text)/temperature) over the seen classes, with `text` a compile-time constant
    (as the quick results were measured). Kept per (model, text, steps, lr, temperature) so
    a rerun in the same process does not compile it again."""
    key = (model, text.shape, np.asarray(text).tobytes(), steps, lr, temperature)
    if key in _FIT:
        return _FIT[key]
    opt = optax.adam(lr)

    def loss(p, x, d, y, seen_mask):
        z = scoring.normalise(model.apply(p, x, d)["z"])
        logits = jnp.where(seen_mask, z @ text.T / temperature, -1e9)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def fit(p, x, d, y, seen_mask):
        return optim.minimize(lambda q: loss(q, x, d, y, seen_mask), p, opt, steps)[0]
    _FIT[key] = jax.jit(fit)
    return _FIT[key]


def _chunked(fn, points, desc, batch: int, fixed: bool = False) -> dict:
    """fn over chunks of `batch` rows (of min(batch, M) unless `fixed`), the last one
    zero-padded, so that one compiled shape serves every call."""
    n = len(points)
    size = batch if fixed else min(batch, n)
    outs = []
    for i in range(0, n, size):
        p, d = points[i:i + size], desc[i:i + size]
        pad = size - len(p)
        if pad:
            p = np.concatenate([p, np.zeros((pad,) + p.shape[1:], p.dtype)])
            d = np.concatenate([d, np.zeros((pad,) + d.shape[1:], d.dtype)])
        outs.append({k: np.asarray(v)[:size - pad] for k, v in fn(p, d).items()})
    return {k: np.concatenate([o[k] for o in outs]) for k in outs[0]}


def embed_bank(model: nn.Module, params, points, desc, batch: int = 256) -> dict:
    """{"z", "e"} (M, D) numpy embeddings of every bank row under a frozen network."""
    return _chunked(lambda p, d: _apply(params, p, d, model=model), points, desc, batch)
