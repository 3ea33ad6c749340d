"""A decoder-only transformer LM in Flax Linen (pure init/apply) with an explicit KV cache.

Shapes: B batch, T new tokens in this call, S cache slots, L layers, H heads, Dh head size,
D model width, V vocabulary.

    logits, cache = TransformerLM(cfg).apply(params, tokens, positions, valid,
                                              cache=cache, cache_index=i)

* tokens (B, T) int32, positions (B, T) int32 (per-row positions, so left-padded prompts of
  different lengths share a batch), valid (B, T) bool (False on padding).
* Without a cache (`cache=None`), token t attends to tokens s <= t with valid[s].
* With a cache `{"k": (L, B, S, H, Dh), "v": ..., "valid": (B, S)}` the new keys/values
  are written at slots [i, i + T) and token t attends to slots s <= i + t that are valid;
  the updated cache is returned. Slot index = sequence index, so both paths compute the
  same function (tested: cached and uncached greedy decoding agree).

Architecture (pre-LayerNorm GPT): token + learned position embeddings, L blocks of
causal multi-head self-attention and a GELU MLP with residuals, final LayerNorm, output
head tied to the token embedding. Every Dense may carry a LoRA update
W + (alpha / r) A B with B initialised to zero (Hu et al. 2021), so a LoRA model starts
equal to its base; LoRA parameters are named `lora_a`/`lora_b` (see `sft.lora_labels`).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

Cache = dict[str, jax.Array]


@dataclasses.dataclass(frozen=True)
class LMConfig:
    vocab_size: int
    d_model: int = 128
    num_layers: int = 4
    num_heads: int = 4
    d_ff: int = 512
    max_len: int = 256
    lora_rank: int = 0        # 0: no LoRA parameters
    lora_alpha: float = 16.0
    dtype: str = "float32"    # compute dtype ("bfloat16" on accelerators); params stay f32

    def __post_init__(self):
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model = {self.d_model} must be divisible by num_heads = "
                             f"{self.num_heads}")
        for name in ("vocab_size", "d_model", "num_layers", "num_heads", "d_ff", "max_len"):
            if getattr(self, name) < 1:
                raise ValueError(f"LMConfig.{name} = {getattr(self, name)} must be >= 1")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    def replace(self, **kw) -> LMConfig:
        return dataclasses.replace(self, **kw)


def num_params(params: Any) -> int:
    return sum(x.size for x in jax.tree.leaves(params))


class LoRADense(nn.Module):
    """Dense layer `x W + b`, plus `(alpha/r) x A B` when `rank > 0`."""

    features: int
    rank: int = 0
    alpha: float = 16.0
    dtype: Any = jnp.float32

    @nn.compact
    def __call__(self, x):
        init = nn.initializers.normal(0.02)
        w = self.param("kernel", init, (x.shape[-1], self.features))
        b = self.param("bias", nn.initializers.zeros, (self.features,))
        y = x @ w.astype(self.dtype) + b.astype(self.dtype)
        if self.rank > 0:
            a = self.param("lora_a", nn.initializers.normal(1.0 / self.rank),
                           (x.shape[-1], self.rank))
            bb = self.param("lora_b", nn.initializers.zeros, (self.rank, self.features))
            y = y + (x @ a.astype(self.dtype)) @ bb.astype(self.dtype) * (self.alpha / self.rank)
        return y


class Block(nn.Module):
    cfg: LMConfig

    @nn.compact
    def __call__(self, x, mask, layer_cache=None, cache_index=None):
        """x (B, T, D), mask (B, T, S) bool; layer_cache (k, v) each (B, S, H, Dh)."""
        c = self.cfg
        dt = jnp.dtype(c.dtype)
        dense = lambda f, name: LoRADense(f, c.lora_rank, c.lora_alpha, dt, name=name)
        b, t, _ = x.shape
        h = nn.LayerNorm(dtype=dt, name="ln_attn")(x)
        q, k, v = (dense(c.d_model, n)(h).reshape(b, t, c.num_heads, c.head_dim)
                   for n in ("q", "k", "v"))
        new_cache = None
        if layer_cache is not None:
            ck, cv = layer_cache
            k = jax.lax.dynamic_update_slice(ck, k.astype(ck.dtype), (0, cache_index, 0, 0))
            v = jax.lax.dynamic_update_slice(cv, v.astype(cv.dtype), (0, cache_index, 0, 0))
            new_cache = (k, v)
        scores = jnp.einsum("bthd,bshd->bhts", q, k.astype(dt)).astype(jnp.float32)
        scores = scores / jnp.sqrt(jnp.float32(c.head_dim))
        scores = jnp.where(mask[:, None], scores, jnp.finfo(jnp.float32).min)
        att = jax.nn.softmax(scores, axis=-1).astype(dt)
        y = jnp.einsum("bhts,bshd->bthd", att, v.astype(dt)).reshape(b, t, c.d_model)
        x = x + dense(c.d_model, "o")(y)
        h = nn.LayerNorm(dtype=dt, name="ln_mlp")(x)
        h = dense(c.d_ff, "mlp_in")(h)
        x = x + dense(c.d_model, "mlp_out")(nn.gelu(h))
        return x, new_cache


class TransformerLM(nn.Module):
    """See the module docstring for the call signature and shapes."""

    cfg: LMConfig

    @nn.compact
    def __call__(self, tokens, positions, valid, cache: Cache | None = None,
                 cache_index=None):
        c = self.cfg
        dt = jnp.dtype(c.dtype)
        embed = self.param("embed", nn.initializers.normal(0.02), (c.vocab_size, c.d_model))
        pos = self.param("pos_embed", nn.initializers.normal(0.02), (c.max_len, c.d_model))
        x = (embed[tokens] + pos[jnp.clip(positions, 0, c.max_len - 1)]).astype(dt)
        t = tokens.shape[1]
        if cache is None:
            idx = jnp.arange(t)
            mask = (idx[None, :, None] >= idx[None, None, :]) & valid[:, None, :]
        else:
            s = cache["valid"].shape[1]
            key_valid = jax.lax.dynamic_update_slice(cache["valid"], valid, (0, cache_index))
            q_slot = cache_index + jnp.arange(t)
            mask = (q_slot[None, :, None] >= jnp.arange(s)[None, None, :]) & key_valid[:, None, :]
        ks, vs = [], []
        for i in range(c.num_layers):
            layer_cache = None if cache is None else (cache["k"][i], cache["v"][i])
            x, new = Block(c, name=f"block_{i}")(x, mask, layer_cache, cache_index)
            if new is not None:
                ks.append(new[0])
                vs.append(new[1])
        x = nn.LayerNorm(dtype=dt, name="ln_final")(x)
        logits = (x @ embed.astype(dt).T).astype(jnp.float32)
        if cache is None:
            return logits, None
        return logits, {"k": jnp.stack(ks), "v": jnp.stack(vs), "valid": key_valid}


def init_cache(cfg: LMConfig, batch: int, length: int) -> Cache:
    """An empty cache of `length` slots (length <= cfg.max_len)."""
    if length > cfg.max_len:
        raise ValueError(f"cache length {length} exceeds the context max_len = {cfg.max_len}")
    shape = (cfg.num_layers, batch, length, cfg.num_heads, cfg.head_dim)
    dt = jnp.dtype(cfg.dtype)
    return {"k": jnp.zeros(shape, dt), "v": jnp.zeros(shape, dt),
            "valid": jnp.zeros((batch, length), bool)}


@functools.partial(jax.jit, static_argnums=0)
def init_params(cfg: LMConfig, key: jax.Array) -> Any:
    """Parameters of `TransformerLM(cfg)` (a plain pytree)."""
    tokens = jnp.zeros((1, 2), jnp.int32)
    return TransformerLM(cfg).init(key, tokens, jnp.zeros((1, 2), jnp.int32),
                                   jnp.ones((1, 2), bool))


def forward(cfg: LMConfig, params: Any, tokens, valid) -> jax.Array:
    """Logits (B, T, V) of right- or left-padded sequences (positions = count of valid
    tokens before each one), no cache; the training and scoring path."""
    positions = jnp.maximum(jnp.cumsum(valid.astype(jnp.int32), axis=1) - 1, 0)
    logits, _ = TransformerLM(cfg).apply(params, tokens, positions, valid)
    return logits
