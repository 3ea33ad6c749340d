"""SFT: chat JSONL loading errors, prompt loss masking, LoRA (starts at the base, trains only
its own parameters), the addition task's text and split."""
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lib.lm import chat, model, sft, tasks
from lib.lm.tokenizer import Tokenizer

TOK = Tokenizer()
CONV = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "world"}, {"role": "user", "content": "again"},
        {"role": "assistant", "content": "ok"}]


def test_jsonl_round_trip_and_errors_name_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    sft.write_chat_jsonl(str(path), [CONV, CONV[:3]])
    assert sft.load_chat_jsonl(str(path)) == [CONV, CONV[:3]]
    path.write_text(json.dumps({"messages": CONV}) + "\n{not json\n")
    with pytest.raises(ValueError, match=r"d.jsonl:2: not valid JSON"):
        sft.load_chat_jsonl(str(path))
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}) + "\n")
    with pytest.raises(ValueError, match=r":1: no assistant turn"):
        sft.load_chat_jsonl(str(path))
    path.write_text(json.dumps({"messages": [{"role": "bot", "content": "x"}]}) + "\n")
    with pytest.raises(ValueError, match=r":1: message 0 has role 'bot'"):
        sft.load_chat_jsonl(str(path))


def test_loss_mask_covers_exactly_the_assistant_turns():
    ids, mask = sft.encode_conversation(TOK, CONV, 200)
    assert TOK.decode(ids) == chat.render_chat(CONV, add_generation_prompt=False)
    assert TOK.decode(ids[mask == 1]) == "world<|end|>ok<|end|>"
    _, everything = sft.encode_conversation(TOK, CONV, 200, train_on_prompt=True)
    assert everything.all()
    with pytest.raises(ValueError, match="more than the context max_len = 10"):
        sft.encode_conversation(TOK, CONV, 10)


def test_masked_nll_ignores_prompt_tokens():
    cfg = model.LMConfig(vocab_size=TOK.vocab_size, d_model=16, num_layers=1, num_heads=2,
                         d_ff=32, max_len=64)
    params = model.init_params(cfg, jax.random.key(0))
    ids, mask = sft.encode_conversation(TOK, CONV, 64)
    batch = {k: jnp.asarray(v) for k, v in sft.pad_examples([(ids, mask)], 64, TOK.pad_id).items()}
    loss, _ = jax.jit(lambda p, b: sft.masked_nll(cfg, p, b))(params, batch)
    # changing a prompt token's *target* does not enter the loss directly; compute by hand
    logits = jax.jit(lambda p, b: model.forward(cfg, p, b["tokens"], b["valid"]))(
        params, batch)[0, :-1]
    logp = jax.nn.log_softmax(logits)
    tgt = np.asarray(batch["tokens"][0, 1:])
    m = np.asarray(batch["mask"][0, 1:])
    manual = -(np.asarray(logp)[np.arange(len(tgt)), tgt] * m).sum() / m.sum()
    np.testing.assert_allclose(float(loss), manual, rtol=1e-5)


def test_lora_starts_at_the_base_model_and_trains_only_lora_leaves():
    base_cfg = model.LMConfig(vocab_size=TOK.vocab_size, d_model=16, num_layers=1, num_heads=2,
                              d_ff=32, max_len=64)
    lora_cfg = base_cfg.replace(lora_rank=4)
    base = model.init_params(base_cfg, jax.random.key(0))
    params = sft.merge_base(model.init_params(lora_cfg, jax.random.key(1)), base)
    ids, mask = sft.encode_conversation(TOK, CONV, 64)
    batch = {k: jnp.asarray(v) for k, v in sft.pad_examples([(ids, mask)] * 2, 64,
                                                            TOK.pad_id).items()}
    fwd = jax.jit(model.forward, static_argnums=0)
    np.testing.assert_allclose(fwd(lora_cfg, params, batch["tokens"], batch["valid"]),
                               fwd(base_cfg, base, batch["tokens"], batch["valid"]), atol=1e-5)
    opt = sft.make_optimizer(1e-2, 20, lora=True, params=params)

    @jax.jit
    def step(p, state):
        (loss, _), g = jax.value_and_grad(lambda q: sft.masked_nll(lora_cfg, q, batch),
                                          has_aux=True)(p)
        upd, state = opt.update(g, state, p)
        return optax.apply_updates(p, upd), state, loss

    state = opt.init(params)
    p, state, loss0 = step(params, state)
    for _ in range(19):
        p, state, loss = step(p, state)
    assert float(loss) < float(loss0) - 0.1
    labels = sft.lora_labels(p)
    for (path, new), old, lab in zip(jax.tree_util.tree_flatten_with_path(p)[0],
                                     jax.tree.leaves(params), jax.tree.leaves(labels)):
        if lab == "freeze":
            np.testing.assert_array_equal(new, old, err_msg=jax.tree_util.keystr(path))
    with pytest.raises(ValueError, match="lora_rank > 0"):
        sft.make_optimizer(1e-2, 10, lora=True, params=base)


def test_addition_working_is_correct_and_split_is_disjoint():
    p = tasks.Problem(347, 85)
    assert tasks.prompt_text(p, 4) == "0347+0085"
    assert tasks.solution_text(p, 4) == "7+5+0=12 4+8+1=13 3+0+1=04 0+0+0=00 =00432"
    rng = np.random.default_rng(0)
    for q in tasks.sample_problems(rng, 200, 5, held_out=False, test_fraction=0.2):
        assert tasks.exact_match(q, tasks.solution_text(q, 5))
        assert not tasks.is_held_out(q, 0.2)
    test = tasks.sample_problems(rng, 50, 5, held_out=True, test_fraction=0.2)
    assert all(tasks.is_held_out(q, 0.2) for q in test)
    assert tasks.parse_answer("no answer here") is None
    assert not tasks.exact_match(p, "=00431")
