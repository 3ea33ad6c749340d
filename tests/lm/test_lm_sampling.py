"""KV-cache decoding against full recomputation, log-probs against scoring, input errors."""
import jax
import numpy as np
import pytest

from lib.lm import model, sampling

CFG = model.LMConfig(vocab_size=50, d_model=32, num_layers=2, num_heads=4, d_ff=64, max_len=48)


@pytest.fixture(scope="module")
def params():
    p = model.init_params(CFG, jax.random.key(0))
    # scale up the random weights so greedy decoding is not a constant token
    return jax.tree.map(lambda x: x * 6.0 if x.ndim == 2 else x, p)


PROMPTS = [[3, 4, 5], [7, 8, 9, 10, 11, 12, 13], [1]]


def test_cached_and_uncached_greedy_decoding_agree(params):
    kw = dict(key=jax.random.key(1), max_tokens=12, temperature=0.0)
    cached = sampling.generate(CFG, params, PROMPTS, use_cache=True, **kw)
    full = sampling.generate(CFG, params, PROMPTS, use_cache=False, **kw)
    for a, b in zip(cached, full):
        assert a[0].tokens == b[0].tokens
        np.testing.assert_allclose(a[0].logprobs, b[0].logprobs, atol=1e-4)
    assert len(set(cached[1][0].tokens)) > 1                 # a non-trivial sequence


def test_batched_left_padded_prompts_match_single_prompts(params):
    kw = dict(key=jax.random.key(1), max_tokens=12, temperature=0.0)
    batched = sampling.generate(CFG, params, PROMPTS, **kw)
    for prompt, got in zip(PROMPTS, batched):
        alone = sampling.generate(CFG, params, [prompt], **kw)[0]
        assert got[0].tokens == alone[0].tokens


def test_sampled_logprobs_equal_scored_logprobs(params):
    out = sampling.generate(CFG, params, PROMPTS[:2], key=jax.random.key(3), n=3, max_tokens=12,
                            temperature=1.0, top_p=0.9, top_logprobs=3)
    for prompt, samples in zip(PROMPTS, out):
        assert len(samples) == 3
        for s in samples:
            np.testing.assert_allclose(s.logprobs, sampling.score(CFG, params, prompt, s.tokens),
                                       atol=1e-4)
            for t, lp, top in zip(s.tokens, s.logprobs, s.top_logprobs):
                assert top[0][1] >= lp - 1e-6 and len(top) == 3      # top-1 is the maximum
    assert len({tuple(s.tokens) for s in out[0]}) > 1                # n samples differ


def test_tiny_top_p_is_greedy(params):
    greedy = sampling.generate(CFG, params, PROMPTS, key=jax.random.key(0), max_tokens=12,
                               temperature=0.0)
    nucleus = sampling.generate(CFG, params, PROMPTS, key=jax.random.key(5), max_tokens=12,
                                temperature=1.0, top_p=1e-6)
    assert [g[0].tokens for g in greedy] == [s[0].tokens for s in nucleus]


def test_stop_token_and_stop_strings(params):
    first = sampling.generate(CFG, params, [PROMPTS[1]], key=jax.random.key(1), max_tokens=12,
                              temperature=0.0)[0][0]
    stop_tok = first.tokens[3]
    cut = sampling.generate(CFG, params, [PROMPTS[1]], key=jax.random.key(1), max_tokens=12,
                            temperature=0.0, stop_ids=(stop_tok,))[0][0]
    k = first.tokens.index(stop_tok)
    assert cut.tokens == first.tokens[:k] and cut.finish_reason == "stop"
    assert first.finish_reason == "length" and len(first.tokens) == 12
    decode = lambda ids: "".join(chr(97 + i % 26) for i in ids)
    text = decode(first.tokens)
    stop = text[5:7]
    kept_text, kept = sampling.apply_stop_strings(first, decode, [stop])
    assert kept_text == text[:text.find(stop)] and decode(kept.tokens) == kept_text


def test_prompt_longer_than_context_is_refused_before_compute(params):
    with pytest.raises(ValueError, match="exceed the model's context of 48 tokens"):
        sampling.generate(CFG, params, [[1] * 40], key=jax.random.key(0), max_tokens=10)
    with pytest.raises(ValueError, match="outside"):
        sampling.generate(CFG, params, [[1, 99]], key=jax.random.key(0), max_tokens=2)
    with pytest.raises(ValueError, match="empty"):
        sampling.generate(CFG, params, [[]], key=jax.random.key(0), max_tokens=2)
